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
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';

/** The JetStream stream that carries every issue event, published by the issue service's outbox relay. */
export const ISSUE_EVENTS_STREAM = 'ISSUE_EVENTS';

/** Event names as receivers see them, and the NATS subject each is published on. */
export const ISSUE_EVENT_SUBJECTS = {
  'issue.created': 'issues.created',
  'issue.updated': 'issues.updated',
} as const;

export type IssueEventName = keyof typeof ISSUE_EVENT_SUBJECTS;
export const ISSUE_EVENT_NAMES = Object.keys(ISSUE_EVENT_SUBJECTS) as IssueEventName[];

/** The durable pull consumer that the delivery service's replicas share. */
export const DELIVERY_CONSUMER = 'delivery';

/**
 * The envelope of an issue event: the exact JSON that the outbox stores, NATS carries and a
 * webhook receives. `issue` and `changes` are opaque here; the issue service defines them.
 */
export interface IssueEventEnvelope {
  id: string;
  event: IssueEventName;
  created_at: string;
  team_id: number;
  issue: Record<string, unknown>;
  changes?: Record<string, { from: unknown; to: unknown }>;
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/**
 * Messages stay for a week whoever has consumed them, so a consumer that falls behind or is
 * recreated can catch up. Publishes carry the event id as `Nats-Msg-Id`; the duplicate window only
 * has to outlast a relay crash between publishing and marking the outbox row, because the delivery
 * service derives delivery ids from the event id and so never sends an event twice anyway.
 */
export const ISSUE_EVENTS_STREAM_CONFIG: Partial<StreamConfig> & { name: string } = {
  name: ISSUE_EVENTS_STREAM,
  subjects: Object.values(ISSUE_EVENT_SUBJECTS),
  retention: RetentionPolicy.Limits,
  storage: StorageType.File,
  discard: DiscardPolicy.Old,
  max_age: nanos(7 * DAY_MS),
  max_bytes: 1024 ** 3,
  duplicate_window: nanos(10 * MINUTE_MS),
  num_replicas: 1,
};

export interface DeliveryConsumerOptions {
  /** How long the server waits for an ack before redelivering a message. */
  ackWaitMs?: number;
  /** Messages handed out but not yet acknowledged, across all replicas. */
  maxAckPending?: number;
}

/** Explicit acks and unlimited redelivery: an event leaves the consumer only once its fan-out is stored. */
export function deliveryConsumerConfig(options: DeliveryConsumerOptions = {}): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: DELIVERY_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subjects: Object.values(ISSUE_EVENT_SUBJECTS),
    ack_wait: nanos(options.ackWaitMs ?? 30_000),
    max_deliver: -1,
    max_ack_pending: options.maxAckPending ?? 1_000,
  };
}

const isApiError = (error: unknown, code: number) => error instanceof JetStreamApiError && error.code === code;

/** Creates the ISSUE_EVENTS stream, or brings an existing one to this configuration. Safe to race. */
export async function ensureIssueEventsStream(jsm: JetStreamManager): Promise<void> {
  const { name, ...config } = ISSUE_EVENTS_STREAM_CONFIG;
  try {
    await jsm.streams.info(name);
  } catch (error) {
    if (!isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
    try {
      await jsm.streams.add(ISSUE_EVENTS_STREAM_CONFIG);
      return;
    } catch (addError) {
      // Another replica created it between our two calls; fall through to update it.
      if (!(addError instanceof JetStreamApiError)) throw addError;
    }
  }
  await jsm.streams.update(name, config);
}

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
  await jsm.consumers.update(ISSUE_EVENTS_STREAM, durable_name, updatable);
}
