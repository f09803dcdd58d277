// The first import of main.ts: tracing must start before express, pg and grpc-js are loaded.
import { bootService } from '@worklane/observability';
import { loadWebhookConfig } from './config';

export const { config, runtime } = bootService('webhook', () => loadWebhookConfig());
