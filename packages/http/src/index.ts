export { HttpError, badRequest, forbidden, notFound, unauthenticated, validationFailed, type ErrorBody } from './errors';
export { IDENTITY_HEADERS, IDENTITY_ISSUERS, identityIssuersOf, signIdentity, verifyIdentity, requireIdentity, requireTeam, type Identity } from './identity';
export { bodyOf, parseBody, fields, type FieldErrors } from './validation';
export { FieldErrorCollector, DEFAULT_FIELD_ERROR_LIMITS, FIELD_ERRORS_CEILING, truncateText, type FieldErrorLimits } from './field-errors';
export { textProblem, collectTextProblems, requireStorableText } from './text-input';
export { DEFAULT_INPUT_LIMITS, inputLimitsFrom, type InputLimits } from './input-limits';
export { resource, idParam, type ResourceHandlers } from './routes';
export { createServiceApp, type ServiceAppOptions } from './app';
export { DEFAULT_RETRY_AFTER_SECONDS, SERVICE_UNAVAILABLE_MESSAGE, serviceUnavailable, writeServiceUnavailable } from './service-unavailable';
export { DependencyUnavailableError, isDependencyUnavailable } from '@worklane/observability';
export { readiness, type ReadinessCheck, type ReadinessOptions } from './readiness';
export { REQUEST_ID_ATTRIBUTE, REQUEST_ID_HEADER, accessLog, isValidRequestId, requestId, routeOf } from './request-id';
export { listen, closeHttpServer } from './server';
export {
  API_ROUTES,
  API_UPSTREAMS,
  PUBLIC_API_ROUTES,
  matchApiRoute,
  matchPublicApiRoute,
  type ApiRoute,
  type ApiUpstream,
  type PublicApiRoute,
  type PublicRouteMatch,
  type RouteMatch,
} from './api-routes';
export { byId, decodeCursor, encodeCursor, nextPageLink, readPage, rowsToFetch, sendPage, streamWholeList, type ListKind, type PageLimits, type PageRequest } from './paging';
export { QUOTA_EXCEEDED, QuotaExceededHttpError, quotaAnswer, withQuotaAnswer } from './quota';
export { TokenBuckets } from './token-buckets';
export { idempotentPosts, createdAnswer, type AnswerSeal, type CreatedAnswer, type IdempotencyOptions } from './idempotency/middleware';
export { serviceIdempotency, type ServiceIdempotency } from './idempotency/service';
export { IDEMPOTENCY_KEY_HEADER, canonicalJson, idempotencyKeyOf, requestFingerprint } from './idempotency/request';
export {
  IdempotencyKeyRetention,
  IdempotencyKeys,
  deleteExpiredIdempotencyKeys,
  type IdempotencyKeyOptions,
  type IdempotencyRetentionOptions,
  type IdempotencyScope,
  type IdempotentRequest,
  type Reservation,
  type SqlClient,
  type StoredResponse,
} from './idempotency/store';
