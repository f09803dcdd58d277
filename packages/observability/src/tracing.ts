// Started before express, pg, grpc-js and undici are loaded so that their instrumentations can
// patch them. The SDK is required only when tracing is on: it costs ~30 MB of memory per process.
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';

export interface TracingOptions {
  serviceName: string;
  /** OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT); tracing stays off when neither it nor an exporter is given. */
  otlpEndpoint?: string | undefined;
  /** An exporter to use instead of OTLP, e.g. an InMemorySpanExporter in tests (spans are exported one by one). */
  exporter?: SpanExporter;
}

export interface Tracing {
  enabled: boolean;
  /** Flushes pending spans and stops the SDK. */
  shutdown(): Promise<void>;
}

/** Starts the OpenTelemetry Node SDK with the HTTP, express, gRPC, pg and undici instrumentations. */
export function startTracing(options: TracingOptions): Tracing {
  if (!options.exporter && !options.otlpEndpoint) return { enabled: false, shutdown: async () => {} };

  // Loaded only when tracing is on: a service without it never loads the SDK (memory, start time).
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { BatchSpanProcessor, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { envDetector } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { ExpressInstrumentation } = require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { GrpcInstrumentation } = require('@opentelemetry/instrumentation-grpc') as typeof import('@opentelemetry/instrumentation-grpc');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { PgInstrumentation } = require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici') as typeof import('@opentelemetry/instrumentation-undici');
  /* eslint-enable @typescript-eslint/no-require-imports */

  const processors: SpanProcessor[] = [];
  if (options.exporter) processors.push(new SimpleSpanProcessor({ exporter: options.exporter }));
  if (options.otlpEndpoint) {
    const url = `${options.otlpEndpoint.replace(/\/$/, '')}/v1/traces`;
    processors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) }));
  }

  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    spanProcessors: processors,
    metricReaders: [],
    logRecordProcessors: [],
    // Only OTEL_RESOURCE_ATTRIBUTES (the Helm chart puts the release, version, namespace, pod and
    // node there); the host, OS and process detectors add cost and nothing the chart does not say.
    resourceDetectors: [envDetector],
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes are not worth a trace each.
        ignoreIncomingRequestHook: (request) => /^\/(healthz|readyz|metrics)\b/.test(request.url ?? ''),
      }),
      new ExpressInstrumentation(),
      new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
      new PgInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  return { enabled: true, shutdown: () => sdk.shutdown() };
}
