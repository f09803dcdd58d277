export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const ALLOWED: RateDecision = { allowed: true };

/**
 * Per-key token buckets: `burst` requests at once, refilled at `ratePerSecond`. State is per
 * process, so with N gateway replicas a token may make up to N times the rate.
 */
export class RateLimiter {
  private readonly buckets = new Map<number, Bucket>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    /** Seconds on a monotonic clock. */
    private readonly now: () => number = () => performance.now() / 1000,
  ) {}

  get enabled(): boolean {
    return this.ratePerSecond > 0;
  }

  /** Spends one request of `key`'s allowance, or says how long until one is available. */
  take(key: number): RateDecision {
    if (!this.enabled) return ALLOWED;
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.burst, updatedAt: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.updatedAt) * this.ratePerSecond);
      bucket.updatedAt = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return ALLOWED;
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond)) };
  }

  /** Forgets buckets that have refilled: a full bucket and no bucket mean the same. */
  sweep(): void {
    const now = this.now();
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * this.ratePerSecond >= this.burst) this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}
