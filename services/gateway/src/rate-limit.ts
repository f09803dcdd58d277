import { TokenBuckets } from '@worklane/http';

export type RateDecision =
  | { allowed: true }
  /** `waitMs`: until the allowance has room again; `retryAfterSeconds`: the same, rounded up to whole seconds, at least one. */
  | { allowed: false; retryAfterSeconds: number; waitMs: number };

const ALLOWED: RateDecision = { allowed: true };

/** What the RateLimit-* headers say about one allowance of one key. */
export interface AllowanceState {
  /** The burst: the most the allowance holds. */
  limit: number;
  /** Whole units left now. */
  remaining: number;
  /** Seconds until the allowance is full again (0 when it is). */
  resetSeconds: number;
}

/**
 * Per-key token buckets: `burst` requests at once, refilled at `ratePerSecond`. Every decision is
 * taken here, from this process's buckets. Alone, with N gateway replicas a token may make up to
 * N times the rate; once shared (RateLimitSync), the replicas report what each key spent and take
 * the level of a bucket they all share, so together they allow the configured rate.
 */
export class RateLimiter {
  private readonly buckets: TokenBuckets;
  /** Units spent per key since the last sync took them; counted only once shared. */
  private unsynced: Map<number, number> | undefined;

  constructor(ratePerSecond: number, burst: number, /** Seconds on a monotonic clock. */ now?: () => number) {
    this.buckets = new TokenBuckets(ratePerSecond, burst, now);
  }

  get enabled(): boolean {
    return this.buckets.enabled;
  }

  /** The refill rate per second and the burst. */
  get allowance(): { perSecond: number; burst: number } {
    return this.buckets.allowance;
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
    if (!this.enabled || units <= 0) return;
    this.buckets.spend(key, units);
    this.unsynced?.set(key, (this.unsynced.get(key) ?? 0) + units);
  }

  /** The allowance of `key` as the RateLimit-* headers tell it; undefined when there is no limit. */
  state(key: number): AllowanceState | undefined {
    if (!this.enabled) return undefined;
    const level = this.buckets.level(key);
    const { perSecond, burst } = this.allowance;
    return { limit: burst, remaining: Math.max(0, Math.floor(level)), resetSeconds: level >= burst ? 0 : Math.ceil((burst - level) / perSecond) };
  }

  /** From now on, counts what each key spends, for takeUsage (RateLimitSync calls it). */
  share(): void {
    if (this.enabled) this.unsynced ??= new Map();
  }

  /**
   * What each key spent since the previous call, for every key with a bucket here (0 for those
   * that only want to learn the shared level); the count starts again from nothing.
   */
  takeUsage(): Map<number, number> {
    if (!this.unsynced) return new Map();
    const usage = this.unsynced;
    this.unsynced = new Map();
    for (const key of this.buckets.keys()) if (!usage.has(key)) usage.set(key, 0);
    return usage;
  }

  /** Gives back spending a failed sync could not report; the next sync reports it. */
  returnUsage(usage: Iterable<readonly [number, number]>): void {
    if (!this.unsynced) return;
    for (const [key, spent] of usage) if (spent > 0) this.unsynced.set(key, (this.unsynced.get(key) ?? 0) + spent);
  }

  /**
   * Takes `level`, the level of `key`'s shared bucket once the usage sent was taken from it, less
   * what this replica spent since it sent that usage.
   */
  applyShared(key: number, level: number): void {
    if (this.enabled) this.buckets.set(key, level - (this.unsynced?.get(key) ?? 0));
  }

  /**
   * Forgets buckets that have refilled: a full bucket and no bucket mean the same. Keys whose
   * spending a sync has not reported yet stay.
   */
  sweep(): void {
    const unsynced = this.unsynced;
    this.buckets.sweep(unsynced ? (key) => unsynced.has(key) : undefined);
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

/** The draft IETF RateLimit header fields, sent on every API response that passed authentication. */
export const RATE_LIMIT_HEADERS = { limit: 'RateLimit-Limit', remaining: 'RateLimit-Remaining', reset: 'RateLimit-Reset' } as const;

/**
 * The RateLimit-* headers for a request counted against several allowances: those of the one
 * closest to its limit (fewest units left; of two with as few, the one further from full).
 * `RateLimit-Limit` is its burst, `RateLimit-Remaining` the whole units left, `RateLimit-Reset`
 * the seconds until it is full again; on a refusal, the seconds of its Retry-After instead, the
 * moment the next request may go through. None when no allowance limits anything.
 */
export function rateLimitHeaders(allowances: readonly (readonly [RateLimiter, number])[], refusal?: RateDecision): Record<string, string> | undefined {
  let tightest: AllowanceState | undefined;
  for (const [limiter, key] of allowances) {
    const state = limiter.state(key);
    if (!state) continue;
    if (!tightest || state.remaining < tightest.remaining || (state.remaining === tightest.remaining && state.resetSeconds > tightest.resetSeconds)) tightest = state;
  }
  if (!tightest) return undefined;
  const refused = refusal && !refusal.allowed ? refusal : undefined;
  return {
    [RATE_LIMIT_HEADERS.limit]: String(tightest.limit),
    [RATE_LIMIT_HEADERS.remaining]: String(refused ? 0 : tightest.remaining),
    [RATE_LIMIT_HEADERS.reset]: String(refused ? refused.retryAfterSeconds : tightest.resetSeconds),
  };
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
