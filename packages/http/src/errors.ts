import { boundFieldErrors, truncateText, FIELD_ERRORS_CEILING, type FieldErrorLimits } from './field-errors';

export interface ErrorBody {
  message: string;
  errors?: Record<string, string[]>;
  /** On a 422 that lists only some of its field errors: how many more there were. */
  errors_omitted?: number;
}

/** An error that is the response: its status and JSON body reach the client as they are. */
export class HttpError extends Error {
  /** Field errors found but not listed in `errors`. */
  omittedErrors = 0;

  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Record<string, string[]>,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }

  get body(): ErrorBody {
    if (!this.errors) return { message: this.message };
    return this.omittedErrors > 0 ? { message: this.message, errors: this.errors, errors_omitted: this.omittedErrors } : { message: this.message, errors: this.errors };
  }

  /** The body with at most `limits.maxFieldErrors` field errors, each message at most `limits.maxMessageLength` long. */
  boundedBody(limits: FieldErrorLimits): ErrorBody {
    if (!this.errors) return { message: truncateText(this.message, limits.maxMessageLength) };
    const bounded = boundFieldErrors(this.errors, limits);
    const omitted = this.omittedErrors + bounded.omitted;
    const message = truncateText(this.message, limits.maxMessageLength);
    return omitted > 0 ? { message, errors: bounded.errors, errors_omitted: omitted } : { message, errors: bounded.errors };
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
