export interface ErrorBody {
  message: string;
  errors?: Record<string, string[]>;
}

/** An error that is the response: its status and JSON body reach the client as they are. */
export class HttpError extends Error {
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
    return this.errors ? { message: this.message, errors: this.errors } : { message: this.message };
  }
}

export const badRequest = (message = 'The request body is not valid JSON.') => new HttpError(400, message);
export const unauthenticated = () => new HttpError(401, 'Unauthenticated.');
export const forbidden = () => new HttpError(403, 'This action is unauthorized.');
export const notFound = () => new HttpError(404, 'Not found.');

/** 422 with per-field messages; the top-level message is the first of them. */
export function validationFailed(errors: Record<string, string[]>): HttpError {
  const first = Object.values(errors).flat()[0] ?? 'The given data was invalid.';
  return new HttpError(422, first, errors);
}
