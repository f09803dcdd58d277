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
  ISSUE_EVENT_SUBJECTS,
  ISSUE_EVENT_NAMES,
  DELIVERY_CONSUMER,
  deliveryConsumerConfig,
  ensureIssueEventsStream,
  ensureDeliveryConsumer,
  type IssueEventName,
  type IssueEventEnvelope,
  type DeliveryConsumerOptions,
} from './issue-events';
export { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg, type ConsumerMessages, type Consumer } from '@nats-io/jetstream';
