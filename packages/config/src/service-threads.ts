import { z } from 'zod';

/**
 * Settings of the services that run their event path on a thread of their own (the issue service's
 * outbox relay, the delivery service's pipeline): how the main thread, which serves the API, shares
 * a CPU with it.
 */
export const serviceThreadSettings = {
  API_THREAD_NICE: z.coerce
    .number()
    .int()
    .min(0)
    .max(19)
    .default(10)
    .describe(
      "How far below the service's own thread (outbox relay, delivery pipeline) its API thread runs, as a nice increment (0: level). On a busy CPU events then go first, and no team's API requests hold up every team's events",
    ),
};
