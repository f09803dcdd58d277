import { z } from 'zod';

/**
 * Settings of the services that answer POSTs with an `Idempotency-Key` (docs/api-idempotency.md).
 * Kept here so that every such service reads the same names and defaults.
 */
export const idempotencySettings = {
  IDEMPOTENCY_KEY_TTL_HOURS: z.coerce
    .number()
    .min(1)
    .max(24 * 30)
    .default(24)
    .describe('How long the first answer to a POST with an Idempotency-Key is kept and replayed to a retry with the same key; afterwards the key may be used again'),
  IDEMPOTENCY_LEASE_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(3_600_000)
    .default(60_000)
    .describe('How long a POST holds its Idempotency-Key while it runs (a retry meanwhile gets 409); a request that crashed frees its key after this'),
  IDEMPOTENCY_RESPONSE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .max(16_777_216)
    .default(262_144)
    .describe('Largest answer kept for replay, in bytes (the largest create answer, an issue with the longest description, is about 200 KiB)'),
  IDEMPOTENCY_RETENTION_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(1_000)
    .max(3_600_000)
    .default(60_000)
    .describe('Pause between passes that delete expired Idempotency-Key records, once none is left'),
  IDEMPOTENCY_RETENTION_BATCH_SIZE: z.coerce
    .number()
    .int()
    .min(100)
    .max(100_000)
    .default(5_000)
    .describe('Expired Idempotency-Key records deleted per statement; a pass runs batches back to back until none is left'),
};

const idempotencySchema = z.object(idempotencySettings);

/** What the idempotency store and its retention read, in milliseconds; missing settings take their defaults. */
export function idempotencyLimits(config: Partial<Record<keyof typeof idempotencySettings, number>> = {}) {
  const settings = idempotencySchema.parse(config);
  return {
    ttlMs: Math.round(settings.IDEMPOTENCY_KEY_TTL_HOURS * 3_600_000),
    leaseMs: settings.IDEMPOTENCY_LEASE_MS,
    maxResponseBytes: settings.IDEMPOTENCY_RESPONSE_MAX_BYTES,
    retentionIntervalMs: settings.IDEMPOTENCY_RETENTION_INTERVAL_MS,
    retentionBatchSize: settings.IDEMPOTENCY_RETENTION_BATCH_SIZE,
  };
}

export type IdempotencyLimits = ReturnType<typeof idempotencyLimits>;
