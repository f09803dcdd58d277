export { MAX_ID, TIMESTAMP_PATTERN, UUID_PATTERN, WHITE_SPACE, fields, id, pageOf, timestamp, uuid, wholeListOf } from './common';
export { DEFAULT_ERROR_CODES, ERROR_CODES, ERROR_CODE_NAMES, errorBody, errorCodeOf, type ErrorBody, type ErrorCode } from './errors';
export {
  NAME_MAX_LENGTH,
  PROJECT_DESCRIPTION_MAX_LENGTH,
  createOrganizationInput,
  createProjectInput,
  isGithubRepository,
  organization,
  project,
  updateProjectInput,
  type CreateProjectInput,
  type Organization,
  type Project,
  type UpdateProjectInput,
} from './projects';
export {
  ED25519_PUBLIC_KEY_PATTERN,
  OPERATIONAL_EVENTS,
  WEBHOOK_DESCRIPTION_MAX_LENGTH,
  WEBHOOK_EVENTS,
  WEBHOOK_FILTER_MAX_IDS,
  WEBHOOK_SECRET_MAX_LENGTH,
  WEBHOOK_SECRET_MIN_LENGTH,
  WEBHOOK_URL_MAX_LENGTH,
  createWebhookInput,
  isOperationalEvent,
  isWebhookEvent,
  rotateSecretInput,
  rotatedWebhook,
  updateWebhookInput,
  urlSyntaxProblem,
  webhook,
  type CreateWebhookInput,
  type OperationalEvent,
  type RotateSecretInput,
  type RotatedWebhook,
  type UpdateWebhookInput,
  type Webhook,
  type WebhookEvent,
} from './webhooks';
export {
  ISSUE_PRIORITIES,
  ISSUE_STATUSES,
  ISSUE_TEXT_LIMITS,
  ISSUE_TYPES,
  createIssueSchema,
  isCalendarDate,
  isWebUrl,
  issue,
  updateIssueSchema,
  type CreateIssueInput,
  type Issue,
  type UpdateIssueInput,
} from './issues';
export {
  DELIVERY_EVENTS,
  DELIVERY_STATUSES,
  FAILURE_REASONS,
  attempt,
  delivery,
  deliveryDetail,
  deliveryLogFilters,
  type Delivery,
  type DeliveryDetail,
  type DeliveryLogFilters,
  type DeliveryStatus,
  type FailureReason,
} from './deliveries';
export { RECOVERY_STATUSES, recoverWebhookInput, recovery, type RecoverWebhookInput, type Recovery, type RecoveryStatus } from './recoveries';
export { CIRCUIT_BREAKER_STATES, webhookDisabledEvent, webhookFailingEvent, webhookHealth, type WebhookHealth } from './webhook-health';
export { DELIVERY_HEADERS, ISSUE_EDITABLE_FIELDS, issueCreatedEvent, issueUpdatedEvent, pingEvent } from './webhook-events';
export { OPERATIONS, REQUEST_SCHEMAS, RESPONSE_SCHEMAS, findOperation, pathParameters, type Operation, type PathParameter } from './operations';
export { REQUEST_ID_HEADER, REQUEST_ID_PATTERN, buildOpenApiDocument, type DocumentOptions } from './openapi';
export { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENT_REPLAYED_HEADER } from './idempotency';
