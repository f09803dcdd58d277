import { DiscardPolicy, type StreamConfig } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { z } from '@worklane/config';

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
    max_age: nanos(env.ISSUE_EVENTS_MAX_AGE_HOURS * 3_600_000),
    discard: env.ISSUE_EVENTS_DISCARD === 'old' ? DiscardPolicy.Old : DiscardPolicy.New,
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
  if (existing.discard === DiscardPolicy.New && configured.discard === DiscardPolicy.Old) keep('discard', DiscardPolicy.New);
  return { limits, kept };
}

/** Whether applying `limits` would change anything on a stream configured as `existing`. */
export function limitsDiffer(existing: Partial<StreamConfig>, limits: StreamLimits): boolean {
  return (Object.keys(limits) as (keyof StreamLimits)[]).some((limit) => existing[limit] !== limits[limit]);
}
