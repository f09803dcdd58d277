// The first import of main.ts: tracing must start before express, pg, grpc-js and undici are loaded.
import { bootService } from '@worklane/observability';
import { loadDeliveryConfig } from './config';

export const { config, runtime } = bootService('delivery', () => loadDeliveryConfig());
