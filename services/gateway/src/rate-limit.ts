import { TokenBuckets } from '@worklane/http';

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

const ALLOWED: RateDecision = { allowed: true };

/**
 * Per-key token buckets: `burst` requests at once, refilled at `ratePerSecond`. State is per
 * process, so with N gateway replicas a token may make up to N times the rate.
 */
export class RateLimiter {
  private readonly buckets: TokenBuckets;

  constructor(ratePerSecond: number, burst: number, /** Seconds on a monotonic clock. */ now?: () => number) {
    this.buckets = new TokenBuckets(ratePerSecond, burst, now);
  }

  get enabled(): boolean {
    return this.buckets.enabled;
  }

  /** Spends one request of `key`'s allowance, or says how long until one is available. */
  take(key: number): RateDecision {
    const decision = this.check(key);
    if (decision.allowed) this.spend(key);
    return decision;
  }

  /** Whether `key` may make a request now, without spending anything. */
  check(key: number): RateDecision {
    if (!this.enabled || this.buckets.level(key) >= 1) return ALLOWED;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(this.buckets.msUntil(key, 1) / 1000)) };
  }

  /** Spends one request of `key`'s allowance (after `check` allowed it). */
  spend(key: number): void {
    if (this.enabled) this.buckets.spend(key, 1);
  }

  /** Forgets buckets that have refilled: a full bucket and no bucket mean the same. */
  sweep(): void {
    this.buckets.sweep();
  }

  get size(): number {
    return this.buckets.size;
  }
}

/**
 * A request counts against several allowances at once (its token's and its team's): it is allowed
 * only when every one of them allows it, and then spends one of each. A refused request spends
 * nothing, and its Retry-After is the longest wait among the allowances that refused it.
 */
export function takeEach(allowances: readonly (readonly [RateLimiter, number])[]): RateDecision {
  let refused: RateDecision | undefined;
  for (const [limiter, key] of allowances) {
    const decision = limiter.check(key);
    if (!decision.allowed && (!refused || refused.allowed || decision.retryAfterSeconds > refused.retryAfterSeconds)) refused = decision;
  }
  if (refused) return refused;
  for (const [limiter, key] of allowances) limiter.spend(key);
  return ALLOWED;
}
