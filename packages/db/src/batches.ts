import { setTimeout as sleep } from 'node:timers/promises';

export interface BatchesOptions {
  /** Checked before each batch: false stops (a service shutting down). */
  keepGoing?: () => boolean;
  /**
   * After each full batch, a rest this many times as long as the batch took, so background work
   * holds a database connection (and the writes behind it) that share of the time at most and the
   * other statements go in between: 1 halves it. 0 (the default) runs batches back to back.
   */
  restRatio?: number;
  /** The longest rest between two batches. */
  maxRestMs?: number;
}

const DEFAULT_MAX_REST_MS = 1_000;

/**
 * Runs `batch`, one bounded statement that resolves to how many rows it handled, again and again
 * until a batch handles fewer than `size` (nothing is left, or what is left is another replica's)
 * or `keepGoing` says stop. Resolves to the rows handled in all.
 */
export async function untilShortBatch(batch: () => Promise<number>, size: number, options: BatchesOptions = {}): Promise<number> {
  const { keepGoing = () => true, restRatio = 0, maxRestMs = DEFAULT_MAX_REST_MS } = options;
  let total = 0;
  while (keepGoing()) {
    const started = performance.now();
    const handled = await batch();
    total += handled;
    if (handled < size) break;
    if (restRatio > 0) await sleep(Math.min(maxRestMs, (performance.now() - started) * restRatio));
  }
  return total;
}
