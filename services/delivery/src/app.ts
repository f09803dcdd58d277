import type { Express } from 'express';
import type { PublicKeys } from '@worklane/config';
import { createServiceApp, idempotentPosts, type IdempotencyOptions, type InputLimits } from '@worklane/http';
import type { Logger, ServiceMetrics } from '@worklane/observability';
import { deliveryRoutes, type DeliveryRouteDeps } from './routes/deliveries';
import { healthRoutes, type HealthRouteDeps } from './routes/health';
import { recoveryRoutes, type RecoveryRouteDeps } from './routes/recoveries';

export interface AppDeps extends DeliveryRouteDeps {
  /** Query limits and how much of a 422 is listed (the HTTP_MAX_* settings). */
  inputLimits?: Partial<InputLimits>;
  /** Retry-After of the 503 answered when a dependency is unavailable (UNAVAILABLE_RETRY_AFTER_SECONDS). */
  retryAfterSeconds?: number;
  logger: Logger;
  metrics: ServiceMetrics;
  /** Public keys of the principals that mint caller identities (gateway, console). */
  identityIssuers: PublicKeys;
  isReady: () => boolean | Promise<boolean>;
  /** Idempotency-Key on POSTs (docs/api-idempotency.md); without it the header is ignored. */
  idempotency?: IdempotencyOptions;
  /** POST .../webhooks/{webhook}/recover and GET .../recoveries/{recovery}. */
  recoveries: Omit<RecoveryRouteDeps, 'webhooks'>;
  /** GET .../webhooks/{webhook}/health: the health store and WEBHOOK_DISABLE_AFTER_MS. */
  endpointHealth: Omit<HealthRouteDeps, 'webhooks'>;
}

/** The delivery log API; main.ts listens. */
export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    inputLimits: deps.inputLimits,
    retryAfterSeconds: deps.retryAfterSeconds,
    metrics: deps.metrics,
    identityIssuers: deps.identityIssuers,
    isReady: deps.isReady,
    routes: (router) => {
      if (deps.idempotency) router.use(idempotentPosts(deps.idempotency));
      deliveryRoutes(router, deps);
      recoveryRoutes(router, { ...deps.recoveries, webhooks: deps.webhooks });
      healthRoutes(router, { ...deps.endpointHealth, webhooks: deps.webhooks });
    },
  });
}
