export interface AttemptLimiterOptions {
  /** Failures allowed per key within the window. */
  max: number;
  windowMs: number;
  /** Keys remembered at most; the least recently failed are forgotten first. */
  maxKeys?: number;
  now?: () => number;
}

/**
 * Counts failures per key over a sliding window. Memory stays bounded: each key keeps at most
 * `max` timestamps and at most `maxKeys` keys are kept.
 */
export class AttemptLimiter {
  private readonly failures = new Map<string, number[]>();
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(private readonly options: AttemptLimiterOptions) {
    this.maxKeys = options.maxKeys ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  /** Milliseconds until the key may try again; 0 when it may try now. */
  retryAfterMs(key: string): number {
    const recent = this.recent(key);
    if (recent.length < this.options.max) return 0;
    return recent[0]! + this.options.windowMs - this.now();
  }

  recordFailure(key: string): void {
    const recent = this.recent(key);
    recent.push(this.now());
    if (recent.length > this.options.max) recent.shift();
    // Re-inserting moves the key to the end, so the oldest-failing keys are evicted first.
    this.failures.delete(key);
    this.failures.set(key, recent);
    while (this.failures.size > this.maxKeys) this.failures.delete(this.failures.keys().next().value!);
  }

  reset(key: string): void {
    this.failures.delete(key);
  }

  private recent(key: string): number[] {
    const since = this.now() - this.options.windowMs;
    const kept = (this.failures.get(key) ?? []).filter((time) => time > since);
    if (kept.length === 0) this.failures.delete(key);
    else this.failures.set(key, kept);
    return kept;
  }
}

export interface LoginThrottleOptions {
  windowMs: number;
  maxPerEmail: number;
  maxPerIp: number;
  now?: () => number;
}

/**
 * Sign-in attempts limited per email address (guessing one account's password) and per client
 * address (trying many accounts). Counts live in this process: each console replica enforces its
 * own limits.
 */
export class LoginThrottle {
  private readonly byEmail: AttemptLimiter;
  private readonly byIp: AttemptLimiter;

  constructor(options: LoginThrottleOptions) {
    this.byEmail = new AttemptLimiter({ max: options.maxPerEmail, windowMs: options.windowMs, now: options.now });
    this.byIp = new AttemptLimiter({ max: options.maxPerIp, windowMs: options.windowMs, now: options.now });
  }

  /** Seconds to wait before another attempt with this email from this address; 0 to go ahead. */
  retryAfterSeconds(email: string, ip: string): number {
    const wait = Math.max(this.byEmail.retryAfterMs(emailKey(email)), this.byIp.retryAfterMs(ip));
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  failed(email: string, ip: string): void {
    this.byEmail.recordFailure(emailKey(email));
    this.byIp.recordFailure(ip);
  }

  /** A correct password clears that account's count; the address keeps its own. */
  succeeded(email: string): void {
    this.byEmail.reset(emailKey(email));
  }
}

const emailKey = (email: string) => email.trim().toLowerCase();

/** "3 minutes", "1 minute", "45 seconds": how long to wait, as a person would say it. */
export function describeWait(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
