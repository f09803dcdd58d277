export { connectNats, parseNatsServers, type NatsConnection, type NatsServers } from './connection';
export { injectTraceContext, extractTraceContext } from './message-trace';
export { captureTraceContext, restoreTraceContext, inSpan, SpanKind, type SpanOptions } from './trace-context';
export {
  ISSUE_EVENTS_STREAM,
  ISSUE_EVENTS_STREAM_CONFIG,
  DEFAULT_STREAM_LIMITS,
  DELIVERY_CONSUMER,
  deliveryConsumerConfig,
  ensureIssueEventsStream,
  ensureDeliveryConsumer,
  type DeliveryConsumerOptions,
  type EnsureStreamOptions,
} from './issue-events';
export { ISSUE_EVENT_SUBJECTS, ISSUE_EVENT_NAMES, ISSUE_EVENTS_DEAD_LETTER_SUBJECT, type IssueEventName } from './event-subjects';
export {
  streamSettingsSchema,
  streamLimitsFrom,
  webhookChangesSettingsSchema,
  webhookChangesLimitsFrom,
  strongerLimits,
  limitsDiffer,
  nanosOf,
  type StreamLimits,
  type StreamSettingsEnv,
  type WebhookChangesSettingsEnv,
  type KeptLimit,
} from './stream-limits';
export { registerStreamMetrics } from './stream-metrics';
export {
  WEBHOOK_CHANGES_STREAM,
  WEBHOOK_CHANGES_SUBJECT,
  WEBHOOK_CHANGE_KINDS,
  encodeWebhookChange,
  readWebhookChange,
  ensureWebhookChangesStream,
  type WebhookChange,
  type WebhookChangeKind,
} from './webhook-changes';
export {
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type ConsumerMessages,
  type Consumer,
} from '@nats-io/jetstream';
export {
  EVENT_SCHEMAS,
  InvalidEventError,
  PUBLISHED_VERSION,
  breakingChanges,
  createIssueEvent,
  deadLetterNotice,
  deadLetterNoticeV1,
  encodeEvent,
  eventJsonSchemas,
  issueCreatedV1,
  issueUpdatedV1,
  readDeadLetterNotice,
  readIssueEvent,
  schemaFileName,
  schemaText,
  toWebhookBody,
  type DeadLetter,
  type DeadLetterNotice,
  type EventJsonSchema,
  type EventSchemaName,
  type IssueCreatedEvent,
  type IssueEvent,
  type IssueEventFields,
  type IssueUpdatedEvent,
  type JsonSchema,
  type ReadResult,
} from './events';
