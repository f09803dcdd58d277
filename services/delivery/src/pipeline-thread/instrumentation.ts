// The first import of the pipeline thread's main.ts: tracing must start before pg, grpc-js, undici
// and the NATS client are loaded on this thread (each thread loads its own copy of the modules), as
// the service's own instrumentation.ts does for its main thread.
import { createLogger, startTracing } from '@worklane/observability';
import { loadDeliveryConfig } from '../config';

export const config = loadDeliveryConfig();
export const tracing = startTracing({ serviceName: config.OTEL_SERVICE_NAME, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
export const logger = createLogger('delivery', config.LOG_LEVEL).child({ thread: 'delivery pipeline' });
