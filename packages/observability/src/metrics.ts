import promClient from 'prom-client';

export { promClient };
export type Registry = promClient.Registry;

/** Buckets from 1 ms to 10 s, fine-grained where API latencies live. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface ServiceMetrics {
  registry: promClient.Registry;
  httpRequests: promClient.Counter<'method' | 'route' | 'status'>;
  httpDuration: promClient.Histogram<'method' | 'route' | 'status'>;
  grpcRequests: promClient.Counter<'method' | 'code'>;
  grpcDuration: promClient.Histogram<'method' | 'code'>;
}

/**
 * One registry per service with process metrics and the RED metrics every service exposes.
 * Labels carry route templates and method names, never raw paths or ids.
 */
export function createMetrics(service: string): ServiceMetrics {
  const registry = new promClient.Registry();
  registry.setDefaultLabels({ service });
  promClient.collectDefaultMetrics({ register: registry, prefix: 'worklane_process_' });
  return {
    registry,
    httpRequests: new promClient.Counter({
      name: 'worklane_http_requests_total',
      help: 'HTTP requests served, by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new promClient.Histogram({
      name: 'worklane_http_request_duration_seconds',
      help: 'HTTP request latency, by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    grpcRequests: new promClient.Counter({
      name: 'worklane_grpc_requests_total',
      help: 'gRPC calls served, by method and status code',
      labelNames: ['method', 'code'],
      registers: [registry],
    }),
    grpcDuration: new promClient.Histogram({
      name: 'worklane_grpc_request_duration_seconds',
      help: 'gRPC call latency, by method and status code',
      labelNames: ['method', 'code'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
  };
}
