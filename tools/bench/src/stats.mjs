// Small figures helpers shared by the benchmarks.
import { sleep } from '../../dev/src/util.mjs';

/** The wall clock in milliseconds since the epoch, to the microsecond (Date.now() stops at the millisecond). */
export const preciseNowMs = () => performance.timeOrigin + performance.now();

/**
 * An RFC 3339 time in milliseconds since the epoch, keeping the microseconds that Worklane's
 * timestamps carry (Date.parse stops at the millisecond): latencies of a few milliseconds measured
 * between two whole milliseconds would be off by up to one.
 */
export function preciseTimeMs(text) {
  const whole = Date.parse(text);
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  return fraction.length > 3 ? whole + Number(`0.${fraction.slice(3)}`) : whole;
}

/** The p-th percentile (0-100) of an ascending array; NaN when empty. */
export const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** Polls `check` every 50 ms until it is true; throws after timeoutMs, naming `what` and `progress()`. */
export async function waitUntil(check, timeoutMs, what, progress = () => '') {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} ${progress()}`);
    await sleep(50);
  }
}

/**
 * Open loop: calls `send(i, intendedAt)` `rate` times a second for `seconds`, on schedule whether
 * or not earlier calls have finished (intendedAt is the Date.now() time call i was due). Resolves
 * once the schedule has run out and every call has settled. `shouldStop()` ends it early.
 */
export async function openLoop(rate, seconds, send, { shouldStop = () => false } = {}) {
  const started = performance.now();
  const startedAt = Date.now();
  const total = Math.round(rate * seconds);
  const inFlight = new Set();
  for (let scheduled = 0; scheduled < total && !shouldStop();) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
    for (; scheduled < due; scheduled++) {
      const i = scheduled;
      const call = Promise.resolve()
        .then(() => send(i, startedAt + (i / rate) * 1000))
        .catch(() => undefined)
        .finally(() => inFlight.delete(call));
      inFlight.add(call);
    }
    await sleep(2);
  }
  await Promise.all(inFlight);
}

/**
 * Runs `work(item, index)` over `items`, at most `parallel` at a time, and resolves to the results
 * in the order of `items`. The first failure rejects (the calls already started finish on their own).
 */
export async function inTurn(items, parallel, work) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i], i);
      }
    }),
  );
  return results;
}
