import { DEFAULT_RETRY_SCHEDULE, nextRetryDelay, parseRetryAfter, parseRetrySchedule } from './retry-schedule';

const middle = () => 0.5;

describe('retry schedule', () => {
  it('is immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h by default', () => {
    expect(DEFAULT_RETRY_SCHEDULE).toEqual([0, 5, 300, 1800, 7200, 18000, 36000, 36000]);
  });

  it('waits the scheduled delay after each failed attempt and gives up at the end', () => {
    const schedule = [0, 5, 300];
    expect(nextRetryDelay(schedule, 1, { random: middle })).toBe(5_000);
    expect(nextRetryDelay(schedule, 2, { random: middle })).toBe(300_000);
    expect(nextRetryDelay(schedule, 3, { random: middle })).toBeNull();
  });

  it('spreads each delay by at most 20% either way', () => {
    expect(nextRetryDelay([0, 100], 1, { random: () => 0 })).toBe(80_000);
    expect(nextRetryDelay([0, 100], 1, { random: () => 0.999999 })).toBe(120_000);
  });

  it('honours Retry-After up to twice the scheduled delay, and never retries sooner than scheduled', () => {
    expect(nextRetryDelay([0, 10], 1, { random: middle, retryAfterSeconds: 15 })).toBe(15_000);
    expect(nextRetryDelay([0, 10], 1, { random: middle, retryAfterSeconds: 3600 })).toBe(20_000);
    expect(nextRetryDelay([0, 10], 1, { random: middle, retryAfterSeconds: 1 })).toBe(10_000);
  });

  it('parses WEBHOOK_RETRY_SCHEDULE and refuses nonsense', () => {
    expect(parseRetrySchedule('0, 1,2.5')).toEqual([0, 1, 2.5]);
    expect(() => parseRetrySchedule('')).toThrow(/seconds/);
    expect(() => parseRetrySchedule('1,-2')).toThrow(/seconds/);
    expect(() => parseRetrySchedule('1,,2')).toThrow(/seconds/);
    expect(() => parseRetrySchedule('5m')).toThrow(/seconds/);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-15T09:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Thu, 15 Jan 2026 09:01:00 GMT', now)).toBe(60);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
