import { errorCodeOf, type ErrorCode } from '@worklane/api-contract';
import { boundFieldErrors, truncateText, FIELD_ERRORS_CEILING, type FieldErrorLimits } from './field-errors';

/** The one error shape of the API (packages/api-contract's `errorBody`). */
export interface ErrorBody {
  message: string;
  /** Stable identifier of the failure, for programs (ERROR_CODES in packages/api-contract). */
  code: ErrorCode;
  errors?: Record<string, string[]>;
  /** On a 422 that lists only some of its field errors: how many more there were. */
  errors_omitted?: number;
}

/**
 * An error that is the response: its status and JSON body reach the client as they are. Its
 * `code` is the status's own (`not_found`, `validation_failed`...) unless a more specific one is given.
 */
export class HttpError extends Error {
  /** Field errors found but not listed in `errors`. */
  omittedErrors = 0;
  readonly code: ErrorCode;

  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Record<string, string[]>,
    readonly headers: Record<string, string> = {},
    code?: ErrorCode,
  ) {
    super(message);
    this.name = 'HttpError';
    this.code = code ?? errorCodeOf(status);
  }

  get body(): ErrorBody {
    const { message, code } = this;
    if (!this.errors) return { message, code };
    return this.omittedErrors > 0 ? { message, code, errors: this.errors, errors_omitted: this.omittedErrors } : { message, code, errors: this.errors };
  }

  /** The body with at most `limits.maxFieldErrors` field errors, each message at most `limits.maxMessageLength` long. */
  boundedBody(limits: FieldErrorLimits): ErrorBody {
    const { code } = this;
    const message = truncateText(this.message, limits.maxMessageLength);
    if (!this.errors) return { message, code };
    const bounded = boundFieldErrors(this.errors, limits);
    const omitted = this.omittedErrors + bounded.omitted;
    return omitted > 0 ? { message, code, errors: bounded.errors, errors_omitted: omitted } : { message, code, errors: bounded.errors };
  }
}

export const badRequest = (message = 'The request body is not valid JSON.') => new HttpError(400, message);
export const unauthenticated = () => new HttpError(401, 'Unauthenticated.');
export const forbidden = () => new HttpError(403, 'This action is unauthorized.');
export const notFound = () => new HttpError(404, 'Not found.');

/**
 * 422 with per-field messages; the top-level message is the first of them. `omitted` counts
 * errors the caller found but did not list. However many are given, the error keeps at most
 * FIELD_ERRORS_CEILING of them, so that even a body with a million bad items costs little memory.
 */
export function validationFailed(errors: Record<string, string[]>, omitted = 0): HttpError {
  const kept = boundFieldErrors(errors, { maxFieldErrors: FIELD_ERRORS_CEILING, maxMessageLength: Number.MAX_SAFE_INTEGER });
  const first = Object.values(kept.errors).flat()[0] ?? 'The given data was invalid.';
  const error = new HttpError(422, first, kept.errors);
  error.omittedErrors = omitted + kept.omitted;
  return error;
}
