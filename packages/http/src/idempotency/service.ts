import { idempotencyLimits, type idempotencySettings } from '@worklane/config';
import type { Logger, Registry } from '@worklane/observability';
import type { IdempotencyOptions } from './middleware';
import { IdempotencyKeyRetention, IdempotencyKeys, type SqlClient } from './store';

export interface ServiceIdempotency {
  /** What the service's app mounts `idempotentPosts` with. */
  options: IdempotencyOptions;
  /** Deletes expired keys; main starts it and stops it before closing the pool. */
  retention: IdempotencyKeyRetention;
}

/** Idempotency-Key for a service's POSTs, on its pool, with the IDEMPOTENCY_* settings of its configuration. */
export function serviceIdempotency(pool: SqlClient, config: Partial<Record<keyof typeof idempotencySettings, number>>, logger: Logger, registry?: Registry): ServiceIdempotency {
  const limits = idempotencyLimits(config);
  const keys = new IdempotencyKeys(pool, limits);
  return {
    options: { keys, maxResponseBytes: limits.maxResponseBytes, logger },
    retention: new IdempotencyKeyRetention({ pool, logger, registry, batchSize: limits.retentionBatchSize, intervalMs: limits.retentionIntervalMs }),
  };
}
