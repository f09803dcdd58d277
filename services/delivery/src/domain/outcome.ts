import type { WebhookResponse } from '@worklane/webhooks';
import { isSuccess, nextRetryDelay } from '@worklane/webhooks/retry-schedule';
import type { DeliveryStatus, FailureReason } from './delivery';

export interface Decision {
  status: DeliveryStatus;
  failureReason: FailureReason | null;
  /** Milliseconds until the next attempt while the delivery stays pending. */
  retryInMs: number | null;
}

/**
 * Where an attempt leaves its delivery: 2xx succeeds; 410 Gone means the receiver wants no more,
 * so it fails at once; anything else is retried on the schedule until it runs out.
 */
export function decide(response: WebhookResponse, attemptsMade: number, schedule: readonly number[], random?: () => number): Decision {
  if (isSuccess(response.statusCode)) return { status: 'succeeded', failureReason: null, retryInMs: null };
  if (response.statusCode === 410) return { status: 'failed', failureReason: 'gone', retryInMs: null };
  const retryInMs = nextRetryDelay(schedule, attemptsMade, { retryAfterSeconds: response.retryAfterSeconds, ...(random ? { random } : {}) });
  if (retryInMs === null) return { status: 'failed', failureReason: 'exhausted', retryInMs: null };
  return { status: 'pending', failureReason: null, retryInMs };
}
