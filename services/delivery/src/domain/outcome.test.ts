import type { WebhookResponse } from '@worklane/webhooks';
import { decide } from './outcome';

const answer = (statusCode: number | null, extra: Partial<WebhookResponse> = {}): WebhookResponse => ({
  statusCode,
  error: statusCode === null ? 'connection refused' : null,
  durationMs: 3,
  responseExcerpt: null,
  ...extra,
});
const schedule = [0, 10, 60];
const middle = () => 0.5;

describe('decide', () => {
  it('marks any 2xx as succeeded', () => {
    expect(decide(answer(200), 1, schedule, middle)).toEqual({ status: 'succeeded', failureReason: null, retryInMs: null });
    expect(decide(answer(204), 1, schedule, middle).status).toBe('succeeded');
  });

  it('stops retrying on 410 Gone', () => {
    expect(decide(answer(410), 1, schedule, middle)).toEqual({ status: 'failed', failureReason: 'gone', retryInMs: null });
  });

  it('retries errors, timeouts, 3xx, 4xx and 5xx on the schedule', () => {
    for (const response of [answer(null), answer(301), answer(404), answer(500)]) {
      expect(decide(response, 1, schedule, middle)).toEqual({ status: 'pending', failureReason: null, retryInMs: 10_000 });
    }
    expect(decide(answer(503), 2, schedule, middle).retryInMs).toBe(60_000);
  });

  it('fails the delivery once the schedule is exhausted', () => {
    expect(decide(answer(500), 3, schedule, middle)).toEqual({ status: 'failed', failureReason: 'exhausted', retryInMs: null });
  });

  it('waits longer when the receiver asks with Retry-After, up to twice the schedule', () => {
    expect(decide(answer(429, { retryAfterSeconds: 15 }), 1, schedule, middle).retryInMs).toBe(15_000);
    expect(decide(answer(429, { retryAfterSeconds: 500 }), 1, schedule, middle).retryInMs).toBe(20_000);
  });
});
