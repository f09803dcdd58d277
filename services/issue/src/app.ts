import type { Express } from 'express';
import { createServiceApp } from '@worklane/http';
import type { Logger, ServiceMetrics } from '@worklane/observability';
import { issueRoutes, type IssueRouteDeps } from './routes/issues';

export interface AppDeps extends IssueRouteDeps {
  logger: Logger;
  metrics: ServiceMetrics;
  identityKey: string;
  isReady: () => boolean | Promise<boolean>;
}

/** The issue service's HTTP API; main.ts listens. */
export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    metrics: deps.metrics,
    identityKey: deps.identityKey,
    isReady: deps.isReady,
    routes: (router) => issueRoutes(router, deps),
  });
}
