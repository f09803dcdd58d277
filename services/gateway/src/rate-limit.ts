import { TokenBuckets } from '@worklane/http';

export type RateDecision =
  | { allowed: true }
  /** `waitMs`: until the allowance has room again; `retryAfterSeconds`: the same, rounded up to whole seconds, at least one. */
  | { allowed: false; retryAfterSeconds: number; waitMs: number };

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
    const waitMs = this.buckets.msUntil(key, 1);
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), waitMs };
  }

  /**
   * Spends `units` of `key`'s allowance: one when `check` allowed a request, more afterwards for
   * a large response. It may leave the allowance in debt, which the refill pays back first.
   */
  spend(key: number, units = 1): void {
    if (this.enabled && units > 0) this.buckets.spend(key, units);
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
    if (!decision.allowed && (!refused || refused.allowed || decision.waitMs > refused.waitMs)) refused = decision;
  }
  if (refused) return refused;
  for (const [limiter, key] of allowances) limiter.spend(key);
  return ALLOWED;
}

/**
 * What a response costs beyond the one request already counted: a response counts as one request
 * per started `unitBytes` (RATE_LIMIT_RESPONSE_UNIT_BYTES), so paging through large objects spends
 * the allowance as fast as its bytes cost the services. 0 makes every response count as one.
 */
export function extraResponseUnits(bytes: number, unitBytes: number): number {
  if (unitBytes <= 0 || bytes <= unitBytes) return 0;
  return Math.ceil(bytes / unitBytes) - 1;
}

/**
 * Answers refusals no sooner than the allowance has room again, at most `maxMs` later: a client
 * that ignores Retry-After and retries at once is slowed to the rate it is allowed, instead of
 * making the gateway answer thousands of refusals a second. Holding a refusal costs a timer and
 * an idle socket; at most `maxHeld` are held at once, the rest are answered at once.
 */
export class RefusalPacing {
  private held = 0;

  constructor(
    private readonly maxMs: number,
    private readonly maxHeld: number,
  ) {}

  /** How many refusals are being held now. */
  get holding(): number {
    return this.held;
  }

  async hold(waitMs: number): Promise<void> {
    const ms = Math.min(Math.ceil(waitMs), this.maxMs);
    if (ms <= 0 || this.held >= this.maxHeld) return;
    this.held += 1;
    try {
      await new Promise((resolve) => setTimeout(resolve, ms));
    } finally {
      this.held -= 1;
    }
  }
}
