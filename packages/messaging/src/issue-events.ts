import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import type { Logger } from '@worklane/observability';
import { ISSUE_EVENTS_DEAD_LETTER_SUBJECT, ISSUE_EVENT_SUBJECTS } from './event-subjects';
import { limitsDiffer, nanosOf, strongerLimits, type StreamLimits } from './stream-limits';

/** The JetStream stream that carries every issue event, published by the issue service's outbox relay. */
export const ISSUE_EVENTS_STREAM = 'ISSUE_EVENTS';

/** The durable pull consumer that the delivery service's replicas share. */
export const DELIVERY_CONSUMER = 'delivery';

const MINUTE_MS = 60_000;

/** The limits the stream gets when nothing is configured. */
export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  num_replicas: 1,
  max_bytes: 1024 ** 3,
  max_msgs: 10_000_000,
  max_age: nanosOf(7 * 24 * 60 * MINUTE_MS),
  discard: DiscardPolicy.New,
};

/**
 * Interest retention: a message stays until the delivery consumer has acked it, so the stream only
 * ever holds events not yet turned into deliveries, and its limits measure that backlog. With
 * `discard: new`, a full stream refuses publishes: the events wait in the outbox instead of pushing
 * out older events nobody has delivered. Publishes carry the event id as `Nats-Msg-Id`; the
 * duplicate window only has to outlast a relay crash between publishing and marking the outbox
 * row, because the delivery service derives delivery ids from the event id anyway.
 */
export const ISSUE_EVENTS_STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: ISSUE_EVENTS_STREAM,
  subjects: [...Object.values(ISSUE_EVENT_SUBJECTS), ISSUE_EVENTS_DEAD_LETTER_SUBJECT],
  retention: RetentionPolicy.Interest,
  storage: StorageType.File,
  duplicate_window: nanosOf(10 * MINUTE_MS),
  ...DEFAULT_STREAM_LIMITS,
};

export interface DeliveryConsumerOptions {
  /** How long the server waits for an ack before redelivering a message. */
  ackWaitMs?: number;
  /** Messages handed out but not yet acknowledged, across all replicas. */
  maxAckPending?: number;
  /** Creates the consumer when missing but leaves an existing one as it is (the issue service). */
  createOnly?: boolean;
}

/** Explicit acks and unlimited redelivery: an event leaves the consumer only once its fan-out is stored. */
export function deliveryConsumerConfig(options: DeliveryConsumerOptions = {}): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: DELIVERY_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subjects: [...Object.values(ISSUE_EVENT_SUBJECTS), ISSUE_EVENTS_DEAD_LETTER_SUBJECT],
    ack_wait: nanosOf(options.ackWaitMs ?? 30_000),
    max_deliver: -1,
    max_ack_pending: options.maxAckPending ?? 1_000,
  };
}

const isApiError = (error: unknown, code: number) => error instanceof JetStreamApiError && error.code === code;

export interface EnsureStreamOptions {
  /** The configured limits; an existing stream keeps any that are stronger. */
  limits?: StreamLimits;
  logger?: Pick<Logger, 'warn' | 'info' | 'error'>;
}

/**
 * Creates the ISSUE_EVENTS stream, or brings an existing one to this configuration without ever
 * weakening it: a configured limit below the stream's own (fewer replicas, fewer bytes, messages or
 * hours, `old` instead of `new`) is logged and the stream keeps its value. The delivery consumer is
 * created too when missing, since with interest retention a stream without it keeps nothing.
 * Safe to race.
 */
export async function ensureIssueEventsStream(jsm: JetStreamManager, options: EnsureStreamOptions = {}): Promise<StreamInfo> {
  const { name, ...base } = ISSUE_EVENTS_STREAM_CONFIG;
  const configured = options.limits ?? DEFAULT_STREAM_LIMITS;
  let info: StreamInfo | undefined;
  try {
    info = await jsm.streams.info(name);
  } catch (error) {
    if (!isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
    try {
      info = await jsm.streams.add({ ...ISSUE_EVENTS_STREAM_CONFIG, ...configured });
    } catch (addError) {
      // Another replica created it between our two calls; compare with what it made.
      if (!(addError instanceof JetStreamApiError)) throw addError;
      info = await jsm.streams.info(name);
    }
  }
  const existing = info.config;
  const { limits, kept } = strongerLimits(existing, configured);
  if (kept.length > 0) {
    options.logger?.warn({ stream: name, kept }, 'ISSUE_EVENTS keeps limits stronger than configured; lower them by hand if that is intended');
  }
  const subjectsDiffer = (base.subjects ?? []).some((subject) => !existing.subjects?.includes(subject));
  if (limitsDiffer(existing, limits) || subjectsDiffer || existing.retention !== base.retention || existing.duplicate_window !== base.duplicate_window) {
    const { subjects, retention, duplicate_window } = base;
    const updated = { ...existing, subjects: [...new Set([...(existing.subjects ?? []), ...(subjects ?? [])])], retention, duplicate_window, ...limits };
    options.logger?.info({ stream: name, from: pickLimits(existing), to: limits, retention }, 'updating ISSUE_EVENTS');
    const { name: _name, ...update } = updated;
    try {
      info = await jsm.streams.update(name, update);
    } catch (error) {
      // The stream exists and works as it is (e.g. more replicas than the cluster has servers were
      // asked for): keep serving with it rather than stopping every team's events over a setting.
      if (!(error instanceof JetStreamApiError)) throw error;
      options.logger?.error({ err: error, stream: name, wanted: limits }, 'ISSUE_EVENTS could not be updated; it keeps its current configuration');
    }
  }
  await ensureDeliveryConsumer(jsm, { createOnly: true });
  return info;
}

const pickLimits = (config: Partial<StreamConfig>) => ({
  num_replicas: config.num_replicas,
  max_bytes: config.max_bytes,
  max_msgs: config.max_msgs,
  max_age: config.max_age,
  discard: config.discard,
});

/** Declares the delivery service's durable pull consumer (after the stream). Safe to race. */
export async function ensureDeliveryConsumer(jsm: JetStreamManager, options: DeliveryConsumerOptions = {}): Promise<void> {
  const config = deliveryConsumerConfig(options);
  try {
    await jsm.consumers.info(ISSUE_EVENTS_STREAM, config.durable_name);
  } catch (error) {
    if (!isApiError(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
    try {
      await jsm.consumers.add(ISSUE_EVENTS_STREAM, config);
      return;
    } catch (addError) {
      if (!(addError instanceof JetStreamApiError)) throw addError;
    }
  }
  const { durable_name, deliver_policy: _fixedAtCreation, ...updatable } = config;
  // An existing consumer is the delivery service's to change: only a release that handles
  // dead-letter notices adds their subject to its filters (an older one would send them as events).
  if (options.createOnly) return;
  await jsm.consumers.update(ISSUE_EVENTS_STREAM, durable_name, updatable);
}
