// The first import of main.ts: tracing must start before express and grpc-js are loaded.
import { bootService } from '@worklane/observability';
import { loadConsoleConfig } from './config';

export const { config, runtime } = bootService('console', () => loadConsoleConfig());
