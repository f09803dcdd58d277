export {
  InvalidEventError,
  createIssueEvent,
  deadLetterNotice,
  encodeEvent,
  readDeadLetterNotice,
  readIssueEvent,
  toWebhookBody,
  type DeadLetter,
  type IssueEventFields,
  type ReadResult,
} from './codec';
export {
  EVENT_SCHEMAS,
  PUBLISHED_VERSION,
  deadLetterNoticeV1,
  issueCreatedV1,
  issueUpdatedV1,
  type DeadLetterNotice,
  type EventSchemaName,
  type IssueCreatedEvent,
  type IssueEvent,
  type IssueUpdatedEvent,
} from './issue-event-schemas';
export { breakingChanges, eventJsonSchemas, schemaFileName, schemaText, type EventJsonSchema, type JsonSchema } from './json-schemas';
