import type { ServerResponse } from 'node:http';
import { DEFAULT_RETRY_AFTER_SECONDS } from '@worklane/config';
import { HttpError } from './errors';

/**
 * The one answer of every service, the gateway included, when a dependency the request needs
 * cannot answer (its database, another service, an upstream): 503, the API's JSON error with
 * code `service_unavailable`, and `Retry-After`. docs/operations.md ("When a dependency is down").
 */

/** Seconds a 503 asks the client to wait, unless UNAVAILABLE_RETRY_AFTER_SECONDS says otherwise. */
export { DEFAULT_RETRY_AFTER_SECONDS };

export const SERVICE_UNAVAILABLE_MESSAGE = 'Service unavailable.';

/** The 503 to throw from a route (the service's error handler answers it). */
export function serviceUnavailable(retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS): HttpError {
  return new HttpError(503, SERVICE_UNAVAILABLE_MESSAGE, undefined, { 'Retry-After': String(retryAfterSeconds) }, 'service_unavailable');
}

/**
 * The same 503 written on a bare node response, for code outside express's error handling (the
 * gateway's proxy). A response already under way is cut off instead: its client sees a broken
 * answer, never a complete-looking one with something else appended.
 */
export function writeServiceUnavailable(res: ServerResponse, retryAfterSeconds = DEFAULT_RETRY_AFTER_SECONDS): void {
  if (res.headersSent) return void res.destroy();
  const error = serviceUnavailable(retryAfterSeconds);
  const body = JSON.stringify(error.body);
  res.writeHead(503, {
    ...error.headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
