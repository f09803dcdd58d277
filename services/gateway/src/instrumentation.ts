// The first import of main.ts: tracing must start before express, http and grpc-js are loaded.
import { bootService } from '@worklane/observability';
import { loadGatewayConfig } from './config';

export const { config, runtime } = bootService('gateway', () => loadGatewayConfig());
