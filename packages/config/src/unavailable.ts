import { z } from 'zod';

/** Seconds a 503 asks the client to wait when a dependency is unavailable, unless configured. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/**
 * Settings of the services that answer requests: what their 503 says when a dependency the
 * request needs (their database, another service, an upstream of the gateway) cannot answer.
 * Read by createServiceApp of @worklane/http (docs/operations.md).
 */
export const unavailableSettings = {
  UNAVAILABLE_RETRY_AFTER_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3_600)
    .default(DEFAULT_RETRY_AFTER_SECONDS)
    .describe('Seconds the 503 of a request whose dependency (database, another service) cannot answer asks the client to wait, in Retry-After'),
};
