// Loaded before express, pg, grpc-js and undici so that their instrumentations can patch them.
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';

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
  const processors: SpanProcessor[] = [];
  if (options.exporter) processors.push(new SimpleSpanProcessor({ exporter: options.exporter }));
  if (options.otlpEndpoint) {
    const url = `${options.otlpEndpoint.replace(/\/$/, '')}/v1/traces`;
    processors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) }));
  }
  if (processors.length === 0) return { enabled: false, shutdown: async () => {} };

  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    spanProcessors: processors,
    metricReaders: [],
    logRecordProcessors: [],
    resourceDetectors: [],
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
