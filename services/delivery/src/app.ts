import type { Express } from 'express';
import { createServiceApp } from '@worklane/http';
import type { Logger, ServiceMetrics } from '@worklane/observability';
import { deliveryRoutes, type DeliveryRouteDeps } from './routes/deliveries';

export interface AppDeps extends DeliveryRouteDeps {
  logger: Logger;
  metrics: ServiceMetrics;
  identityKey: string;
  isReady: () => boolean | Promise<boolean>;
}

/** The delivery log API; main.ts listens. */
export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    metrics: deps.metrics,
    identityKey: deps.identityKey,
    isReady: deps.isReady,
    routes: (router) => deliveryRoutes(router, deps),
  });
}
