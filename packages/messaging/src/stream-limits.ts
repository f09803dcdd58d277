// The configurable limits of Worklane's JetStream streams. Read by every thread's configuration, so
// the module loads no NATS client (`@worklane/messaging/stream-limits`): its types only.
import type { DiscardPolicy, StreamConfig } from '@nats-io/jetstream';
import { z } from '@worklane/config';

/** JetStream counts durations in nanoseconds. */
export const nanosOf = (milliseconds: number) => milliseconds * 1_000_000;

/**
 * The limits of the ISSUE_EVENTS stream, as the issue and delivery services read them from their
 * environment. Both services declare the stream at start, so both carry the same settings.
 */
export const streamSettingsSchema = {
  ISSUE_EVENTS_REPLICAS: z.coerce
    .number()
    .int()
    .min(1)
    .max(5)
    .default(1)
    .describe('Replicas of the ISSUE_EVENTS JetStream stream when it is created or strengthened (at most the number of NATS servers; 3 for the clustered NATS of deploy/nats)'),
  ISSUE_EVENTS_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .default(1024 ** 3)
    .describe('Most bytes the ISSUE_EVENTS stream holds: events not yet taken by the delivery service; when full, publishing is refused and the outbox relay backs off'),
  ISSUE_EVENTS_MAX_MSGS: z.coerce
    .number()
    .int()
    .min(1_000)
    .default(10_000_000)
    .describe('Most messages the ISSUE_EVENTS stream holds; when full, publishing is refused and the outbox relay backs off'),
  ISSUE_EVENTS_MAX_AGE_HOURS: z.coerce
    .number()
    .min(1)
    .max(24 * 365)
    .default(7 * 24)
    .describe('How long an event may wait in the ISSUE_EVENTS stream for the delivery service'),
  ISSUE_EVENTS_DISCARD: z
    .enum(['new', 'old'])
    .default('new')
    .describe('What a full ISSUE_EVENTS stream does: `new` refuses the publish (the event stays in the outbox), `old` drops the oldest event, delivered or not'),
};

export type StreamSettingsEnv = { [K in keyof typeof streamSettingsSchema]: z.infer<(typeof streamSettingsSchema)[K]> };

/** The limits that the declaration compares with an existing stream. */
export interface StreamLimits {
  num_replicas: number;
  max_bytes: number;
  max_msgs: number;
  /** Nanoseconds; 0 is unlimited. */
  max_age: number;
  discard: DiscardPolicy;
}

export function streamLimitsFrom(env: StreamSettingsEnv): StreamLimits {
  return {
    num_replicas: env.ISSUE_EVENTS_REPLICAS,
    max_bytes: env.ISSUE_EVENTS_MAX_BYTES,
    max_msgs: env.ISSUE_EVENTS_MAX_MSGS,
    max_age: nanosOf(env.ISSUE_EVENTS_MAX_AGE_HOURS * 3_600_000),
    discard: env.ISSUE_EVENTS_DISCARD,
  };
}

/**
 * The WEBHOOK_CHANGES stream's limits, read by the webhook service (which publishes) and the delivery service
 * (which follows it); both declare the stream at start. A notice is only needed until every
 * delivery replica has read it, a fraction of a second, so the stream keeps little.
 */
export const webhookChangesSettingsSchema = {
  WEBHOOK_CHANGES_REPLICAS: z.coerce
    .number()
    .int()
    .min(1)
    .max(5)
    .default(1)
    .describe('Replicas of the WEBHOOK_CHANGES JetStream stream when it is created or strengthened (at most the number of NATS servers)'),
  WEBHOOK_CHANGES_MAX_AGE_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(3_600)
    .describe('How long a webhook change notice stays in the WEBHOOK_CHANGES stream; a delivery replica that falls further behind forgets its whole webhook cache'),
  WEBHOOK_CHANGES_MAX_MSGS: z.coerce.number().int().min(1_000).max(100_000_000).default(100_000).describe('Most notices the WEBHOOK_CHANGES stream holds; the oldest go first'),
};

export type WebhookChangesSettingsEnv = { [K in keyof typeof webhookChangesSettingsSchema]: z.infer<(typeof webhookChangesSettingsSchema)[K]> };

export function webhookChangesLimitsFrom(env: WebhookChangesSettingsEnv): StreamLimits {
  return {
    num_replicas: env.WEBHOOK_CHANGES_REPLICAS,
    max_bytes: -1,
    max_msgs: env.WEBHOOK_CHANGES_MAX_MSGS,
    max_age: nanosOf(env.WEBHOOK_CHANGES_MAX_AGE_SECONDS * 1000),
    discard: 'old',
  };
}

/** A limit the configuration asks to lower, kept as the server has it. */
export interface KeptLimit {
  limit: keyof StreamLimits;
  existing: number | string;
  configured: number | string;
}

/** -1 and 0 mean unlimited for byte and message counts and for the age. */
const unlimitedAsInfinity = (value: number) => (value <= 0 ? Number.POSITIVE_INFINITY : value);

/**
 * The limits to apply to an existing stream: each configured limit, unless it would weaken what the
 * stream has (fewer replicas, a smaller size, count or age, or `old` instead of `new`), in which case
 * the existing value stays and is reported. An operator lowers a limit by hand (`nats stream edit`),
 * never by a rollout.
 */
export function strongerLimits(existing: Partial<StreamLimits>, configured: StreamLimits): { limits: StreamLimits; kept: KeptLimit[] } {
  const limits = { ...configured };
  const kept: KeptLimit[] = [];
  const keep = <K extends keyof StreamLimits>(limit: K, value: StreamLimits[K]) => {
    kept.push({ limit, existing: value, configured: configured[limit] });
    limits[limit] = value;
  };
  if (existing.num_replicas !== undefined && existing.num_replicas > configured.num_replicas) keep('num_replicas', existing.num_replicas);
  for (const limit of ['max_bytes', 'max_msgs', 'max_age'] as const) {
    const value = existing[limit];
    if (value !== undefined && unlimitedAsInfinity(value) > unlimitedAsInfinity(configured[limit])) keep(limit, value);
  }
  if (existing.discard === 'new' && configured.discard === 'old') keep('discard', 'new');
  return { limits, kept };
}

/** Whether applying `limits` would change anything on a stream configured as `existing`. */
export function limitsDiffer(existing: Partial<StreamConfig>, limits: StreamLimits): boolean {
  return (Object.keys(limits) as (keyof StreamLimits)[]).some((limit) => existing[limit] !== limits[limit]);
}
