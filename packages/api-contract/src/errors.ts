import { z } from 'zod';

/**
 * The stable `code` of every error answer, next to its `message`. Clients branch on the status and
 * the code; the message is for people and its wording may change. A code, once published, never
 * changes meaning; new ones may be added (docs/api-versioning.md).
 */
export const ERROR_CODES = {
  bad_request: { status: 400, description: 'The request is malformed: the body is not valid JSON, or the target is not a path.' },
  idempotency_key_invalid: { status: 400, description: 'The `Idempotency-Key` header is not 1 to 255 printable ASCII characters.' },
  unauthenticated: { status: 401, description: 'The bearer token is missing, malformed, unknown or revoked.' },
  forbidden: { status: 403, description: 'The `{team}` of the path is not the team of the token.' },
  not_found: { status: 404, description: 'No such route, or no such resource in the team, organization or project (ids that are not positive integers too).' },
  method_not_allowed: { status: 405, description: 'The path exists but not with this method; `Allow` lists the methods it takes.' },
  webhook_inactive: { status: 409, description: 'A ping or redelivery to a webhook that is inactive: activate it first.' },
  webhook_deleted: { status: 409, description: 'A redelivery whose webhook has been deleted.' },
  event_dead_lettered: { status: 409, description: 'A redelivery of an event that was dead-lettered: it was never published.' },
  quota_exceeded: { status: 409, description: 'A create that would take the team past one of its quotas; `limit` says which number.' },
  secret_rotation_limit: {
    status: 409,
    description: 'A secret rotation while the webhook already has as many old secrets still signing as allowed (`limit`): wait until one expires, or rotate with no overlap.',
  },
  idempotency_key_in_use: { status: 409, description: 'A POST with the same `Idempotency-Key` is still being processed; retry once it has finished (`Retry-After`).' },
  recovery_in_progress: { status: 409, description: 'Another recovery job of the webhook is queued or running; wait for it to finish (or ask for the same window to get it).' },
  payload_too_large: { status: 413, description: 'The request body is larger than the limit (1 MiB by default).' },
  unsupported_media_type: { status: 415, description: 'The request body is not JSON (`Content-Type: application/json`, UTF-8, not compressed).' },
  validation_failed: { status: 422, description: 'A field or query parameter is invalid; `errors` lists the messages per field.' },
  idempotency_key_reused: { status: 422, description: 'The `Idempotency-Key` was already used for this operation with another path or body; a new request needs a new key.' },
  recovery_too_large: { status: 422, description: 'The recovery window holds more failed events than one job may send again; ask for a shorter window.' },
  rate_limited: { status: 429, description: 'The token or its team made too many requests; `Retry-After` says when to retry.' },
  server_error: { status: 500, description: 'An unexpected failure; it is logged with the request id.' },
  service_unavailable: { status: 503, description: 'A service the request needs cannot answer right now; retry later.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as ErrorCode[];

/** The code of an error status when the failure has no more specific one. */
export const DEFAULT_ERROR_CODES: Readonly<Record<number, ErrorCode>> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
  500: 'server_error',
  503: 'service_unavailable',
};

/** The code of a status: its default, or the generic one of its class. */
export function errorCodeOf(status: number): ErrorCode {
  return DEFAULT_ERROR_CODES[status] ?? (status >= 500 ? 'server_error' : 'bad_request');
}

/** The one error shape of the API: every 4xx and 5xx answer is this JSON object. */
export const errorBody = z
  .object({
    message: z.string().meta({ description: 'What went wrong, for people. On a 422, the first field error.' }),
    code: z.enum(ERROR_CODE_NAMES as [ErrorCode, ...ErrorCode[]]).meta({ description: 'Stable identifier of the failure, for programs (see the table in the API description).' }),
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .meta({ description: 'On a 422: messages per field; array items and nested fields as `events.1`, the body as a whole as `body`.' }),
    errors_omitted: z.number().int().min(1).optional().meta({ description: 'On a 422 that lists only some of its field errors: how many more there were.' }),
    limit: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'With `quota_exceeded`: the quota the team reached; with `secret_rotation_limit`: the old secrets a webhook may hold.' }),
  })
  .meta({
    description: 'The error shape of every 4xx and 5xx answer.',
    examples: [{ message: 'The name field is required.', code: 'validation_failed', errors: { name: ['The name field is required.'] } }],
  });

export type ErrorBody = z.infer<typeof errorBody>;
