import type { Express } from 'express';
import { createServiceApp } from '@worklane/http';
import { promClient } from '@worklane/observability';
import { fingerprintAssets } from './assets';
import type { ConsoleDeps, ConsoleOptions } from './deps';
import { AttemptLimiter } from './rate-limit';
import { mountConsole } from './routes';

export { PUBLIC_DIR } from './assets';
export type { ConsoleDeps, ConsoleOptions } from './deps';

/** The console's express app: HTML pages over the token service and the services' APIs. */
export function createApp(options: ConsoleOptions): Express {
  const deps: ConsoleDeps = {
    ...options,
    assets: fingerprintAssets(),
    signups: new AttemptLimiter({ max: 10, windowMs: 60 * 60 * 1000 }),
    loginAttempts: new promClient.Counter({
      name: 'worklane_console_login_attempts_total',
      help: 'Console sign-in attempts by outcome (success, failure, throttled)',
      labelNames: ['outcome'],
      registers: [options.metrics.registry],
    }),
  };
  const app = createServiceApp({
    logger: options.logger,
    metrics: options.metrics,
    isReady: options.isReady,
    formBodies: true,
    bodyLimit: '64kb',
    routes: (router) => mountConsole(router, deps),
  });
  app.set('trust proxy', options.trustProxy);
  return app;
}
