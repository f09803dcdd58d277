/**
 * Response times are kept as histograms with geometric buckets (each bound about 25 % above the
 * previous one, from 1 ms to past the longest attempt timeout), so a percentile read from them is
 * within a bucket's width of the exact value, whatever the number of attempts. The bounds are part
 * of the stored data (webhook_health_minutes.duration_buckets): change them only with a migration.
 */
export const BUCKET_BOUNDS_MS: readonly number[] = (() => {
  const bounds: number[] = [];
  for (let bound = 1; bounds.length === 0 || (bounds.at(-1) as number) < 120_000; bound *= 1.25) {
    const rounded = Math.round(bound);
    if (bounds.length === 0 || rounded > (bounds.at(-1) as number)) bounds.push(rounded);
  }
  return bounds;
})();

/** One bucket per bound and one for anything longer than the last bound. */
export const BUCKET_COUNT = BUCKET_BOUNDS_MS.length + 1;

/** The bucket a duration falls in: the first whose bound is at least the duration. */
export function bucketOf(durationMs: number): number {
  let low = 0;
  let high = BUCKET_BOUNDS_MS.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((BUCKET_BOUNDS_MS[middle] as number) >= durationMs) high = middle;
    else low = middle + 1;
  }
  return low;
}

export const emptyBuckets = (): number[] => new Array<number>(BUCKET_COUNT).fill(0);

/**
 * The `quantile` (0 to 1) of a histogram, in whole milliseconds, interpolated inside its bucket;
 * null when the histogram is empty. A value past the last bound reads as that bound.
 */
export function percentile(buckets: readonly number[], quantile: number): number | null {
  const total = buckets.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(quantile * total));
  let seen = 0;
  for (let index = 0; index < buckets.length; index += 1) {
    const count = buckets[index] as number;
    if (count === 0 || seen + count < rank) {
      seen += count;
      continue;
    }
    if (index >= BUCKET_BOUNDS_MS.length) return BUCKET_BOUNDS_MS.at(-1) as number;
    const lower = index === 0 ? 0 : (BUCKET_BOUNDS_MS[index - 1] as number);
    const upper = BUCKET_BOUNDS_MS[index] as number;
    return Math.round(lower + ((upper - lower) * (rank - seen)) / count);
  }
  return BUCKET_BOUNDS_MS.at(-1) as number;
}
