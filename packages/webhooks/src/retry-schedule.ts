/**
 * Seconds to wait before each attempt of a delivery: the first is sent at once, then retried after
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. After the last one the delivery has failed.
 */
export const DEFAULT_RETRY_SCHEDULE: readonly number[] = Object.freeze([0, 5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]);

/** Each delay is spread by up to this fraction either way so that failed receivers are not hit in lockstep. */
export const RETRY_JITTER = 0.2;

/**
 * `value` spread by up to RETRY_JITTER either way; `random` gives a number in [0, 1). Waits of
 * many receivers that failed together end at different times instead of all at once.
 */
export function jittered(value: number, random: () => number = Math.random): number {
  return value * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random());
}

/**
 * Parses `WEBHOOK_RETRY_SCHEDULE`: seconds, comma-separated, e.g. `0,5,300`. The first entry is
 * the delay of the first attempt (normally 0). Throws with a readable message on anything else.
 */
export function parseRetrySchedule(text: string): number[] {
  const entries = text.split(',').map((entry) => entry.trim());
  if (entries.length === 0 || entries.some((entry) => !/^\d+(\.\d+)?$/.test(entry))) {
    throw new Error('must be non-negative numbers of seconds separated by commas, e.g. "0,5,300,1800"');
  }
  const schedule = entries.map(Number);
  if (schedule.length > 50) throw new Error('must not have more than 50 entries');
  if (schedule.some((seconds) => seconds > 7 * 24 * 3600)) throw new Error('must not wait more than a week between attempts');
  return schedule;
}

export interface RetryOptions {
  /** Seconds the receiver asked for with `Retry-After`. */
  retryAfterSeconds?: number | undefined;
  /** A number in [0, 1); Math.random by default. */
  random?: () => number;
}

/**
 * Milliseconds until the next attempt after `attemptsMade` failed attempts, or null when the
 * schedule is exhausted. A receiver's `Retry-After` can only push
 * the next attempt later, never earlier, and never beyond twice the scheduled delay, so a receiver
 * can neither speed up retries nor stall a delivery indefinitely.
 */
export function nextRetryDelay(schedule: readonly number[], attemptsMade: number, options: RetryOptions = {}): number | null {
  const scheduled = schedule[attemptsMade];
  if (scheduled === undefined) return null;
  let seconds = jittered(scheduled, options.random);
  if (options.retryAfterSeconds !== undefined && options.retryAfterSeconds > seconds) {
    seconds = Math.min(options.retryAfterSeconds, 2 * scheduled);
  }
  return Math.round(seconds * 1000);
}

/**
 * `Retry-After` as seconds from `now`: either delay-seconds or an HTTP date (RFC 9110). Undefined
 * when absent or unparseable.
 */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, (date - now) / 1000);
}

/** A 2xx answer: the receiver took the delivery; anything else (or no answer) is retried. */
export const isSuccess = (statusCode: number | null) => statusCode !== null && statusCode >= 200 && statusCode < 300;
