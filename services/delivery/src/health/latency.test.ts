import { durationInWords } from './auto-disable';
import { BUCKET_BOUNDS_MS, BUCKET_COUNT, bucketOf, emptyBuckets, percentile } from './latency';

const histogramOf = (durations: number[]) => {
  const buckets = emptyBuckets();
  for (const duration of durations) buckets[bucketOf(duration)] = (buckets[bucketOf(duration)] as number) + 1;
  return buckets;
};

describe('response-time histogram', () => {
  it('has increasing bounds, about 25 % apart, from 1 ms to past two minutes', () => {
    expect(BUCKET_BOUNDS_MS[0]).toBe(1);
    expect(BUCKET_BOUNDS_MS.at(-1)).toBeGreaterThanOrEqual(120_000);
    for (let index = 1; index < BUCKET_BOUNDS_MS.length; index += 1) {
      const ratio = (BUCKET_BOUNDS_MS[index] as number) / (BUCKET_BOUNDS_MS[index - 1] as number);
      expect(ratio).toBeGreaterThan(1);
      if ((BUCKET_BOUNDS_MS[index - 1] as number) >= 20) expect(ratio).toBeLessThan(1.3);
    }
    expect(BUCKET_COUNT).toBe(BUCKET_BOUNDS_MS.length + 1);
  });

  it('puts a duration in the first bucket whose bound is at least the duration, and longer ones in the last', () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(1)).toBe(0);
    const index = bucketOf(100);
    expect(BUCKET_BOUNDS_MS[index]).toBeGreaterThanOrEqual(100);
    expect(BUCKET_BOUNDS_MS[index - 1]).toBeLessThan(100);
    expect(bucketOf(10_000_000)).toBe(BUCKET_COUNT - 1);
  });

  it('reads percentiles within a bucket of the exact figure', () => {
    const durations = Array.from({ length: 1_000 }, (_, index) => 10 + index);
    const buckets = histogramOf(durations);
    for (const [quantile, exact] of [
      [0.5, 509],
      [0.95, 959],
    ] as const) {
      const estimate = percentile(buckets, quantile)!;
      expect(Math.abs(estimate - exact) / exact).toBeLessThan(0.25);
    }
  });

  it('is null without answered attempts, and a single duration reads as its bucket', () => {
    expect(percentile(emptyBuckets(), 0.5)).toBeNull();
    const single = percentile(histogramOf([250]), 0.95)!;
    expect(single).toBeGreaterThanOrEqual(BUCKET_BOUNDS_MS[bucketOf(250) - 1] as number);
    expect(single).toBeLessThanOrEqual(BUCKET_BOUNDS_MS[bucketOf(250)] as number);
    expect(percentile(histogramOf([500_000]), 0.5)).toBe(BUCKET_BOUNDS_MS.at(-1));
  });
});

describe('durationInWords', () => {
  it('names the two largest units of a period', () => {
    expect(durationInWords(432_000_000)).toBe('5 days');
    expect(durationInWords(86_400_000 + 2 * 3_600_000 + 60_000)).toBe('1 day 2 hours');
    expect(durationInWords(4_000)).toBe('4 seconds');
    expect(durationInWords(250)).toBe('250 ms');
  });
});
