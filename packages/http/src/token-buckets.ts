interface Bucket {
  level: number;
  updatedAt: number;
}

/**
 * Token buckets by key: each holds up to `burst` and refills at `perSecond`; a spend may take it
 * below zero (a debt the refill pays back first). The one mechanism behind the gateway's request
 * rates and the delivery service's fan-out budgets. State is per process.
 */
export class TokenBuckets {
  private readonly buckets = new Map<number, Bucket>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    /** Seconds on a monotonic clock. */
    private readonly now: () => number = () => performance.now() / 1000,
  ) {}

  /** A rate of 0 means no limit. */
  get enabled(): boolean {
    return this.perSecond > 0;
  }

  /** The refill rate per second and the most a bucket holds. */
  get allowance(): { perSecond: number; burst: number } {
    return { perSecond: this.perSecond, burst: this.burst };
  }

  /** What `key` holds now (a full bucket for a key never seen). */
  level(key: number): number {
    return this.refill(key).level;
  }

  spend(key: number, amount: number): void {
    this.refill(key).level -= amount;
  }

  /** Makes `key` hold `level` now (at most the burst), e.g. a level learned from elsewhere. */
  set(key: number, level: number): void {
    const bucket = this.refill(key);
    bucket.level = Math.min(this.burst, level);
  }

  /** The keys that have a bucket: those not known to be full. */
  keys(): IterableIterator<number> {
    return this.buckets.keys();
  }

  /** Milliseconds until `key` holds `amount` (0 when it does now). */
  msUntil(key: number, amount: number): number {
    const missing = amount - this.refill(key).level;
    return missing <= 0 ? 0 : (missing / this.perSecond) * 1000;
  }

  /** Forgets full buckets (a full bucket and no bucket are the same), except those `keep` names. */
  sweep(keep: (key: number) => boolean = () => false): void {
    for (const key of this.buckets.keys()) if (!keep(key) && this.refill(key).level >= this.burst) this.buckets.delete(key);
  }

  get size(): number {
    return this.buckets.size;
  }

  private refill(key: number): Bucket {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { level: this.burst, updatedAt: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.level = Math.min(this.burst, bucket.level + (now - bucket.updatedAt) * this.perSecond);
      bucket.updatedAt = now;
    }
    return bucket;
  }
}
