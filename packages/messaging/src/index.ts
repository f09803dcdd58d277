export { connectNats, natsAnswers, type NatsConnection } from './connection';
export {
  injectTraceContext,
  extractTraceContext,
  captureTraceContext,
  restoreTraceContext,
  inSpan,
  SpanKind,
  type SpanOptions,
} from './trace-context';
export {
  ISSUE_EVENTS_STREAM,
  ISSUE_EVENTS_STREAM_CONFIG,
  ISSUE_EVENTS_DEAD_LETTER_SUBJECT,
  DEFAULT_STREAM_LIMITS,
  ISSUE_EVENT_SUBJECTS,
  ISSUE_EVENT_NAMES,
  DELIVERY_CONSUMER,
  deliveryConsumerConfig,
  ensureIssueEventsStream,
  ensureDeliveryConsumer,
  type IssueEventName,
  type IssueEventEnvelope,
  type DeliveryConsumerOptions,
  type EnsureStreamOptions,
} from './issue-events';
export { streamSettingsSchema, streamLimitsFrom, strongerLimits, limitsDiffer, type StreamLimits, type StreamSettingsEnv, type KeptLimit } from './stream-limits';
export { registerStreamMetrics } from './stream-metrics';
export { DiscardPolicy, JetStreamApiError, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg, type ConsumerMessages, type Consumer } from '@nats-io/jetstream';
