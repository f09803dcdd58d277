import { promClient, type Registry } from '@worklane/observability';

const ATTEMPT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
const LAG_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1_800, 7_200, 36_000, 86_400];

/** Outcome label of a finished delivery. */
export type DeliveryOutcome = 'succeeded' | 'gone' | 'exhausted' | 'webhook_deleted' | 'webhook_inactive';

export interface DeliveryMetrics {
  deliveries: promClient.Counter<'outcome'>;
  attemptDuration: promClient.Histogram<'result'>;
  lag: promClient.Histogram;
  retriesScheduled: promClient.Counter;
}

export function createDeliveryMetrics(registry: Registry): DeliveryMetrics {
  return {
    deliveries: new promClient.Counter({
      name: 'worklane_webhook_deliveries_total',
      help: 'Deliveries that reached a final state, by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    attemptDuration: new promClient.Histogram({
      name: 'worklane_webhook_attempt_duration_seconds',
      help: 'Duration of delivery attempts, by result (status class or error)',
      labelNames: ['result'],
      buckets: ATTEMPT_BUCKETS,
      registers: [registry],
    }),
    lag: new promClient.Histogram({
      name: 'worklane_webhook_delivery_lag_seconds',
      help: 'Time from an event being created to its successful delivery',
      buckets: LAG_BUCKETS,
      registers: [registry],
    }),
    retriesScheduled: new promClient.Counter({
      name: 'worklane_webhook_retries_scheduled_total',
      help: 'Failed attempts after which another attempt was scheduled',
      registers: [registry],
    }),
  };
}

/** `2xx`... `5xx`, or `error` when there was no answer. */
export const attemptResult = (statusCode: number | null) => (statusCode === null ? 'error' : `${Math.floor(statusCode / 100)}xx`);
