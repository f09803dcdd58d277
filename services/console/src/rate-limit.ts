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

/** Sign-in limits: failed attempts per account (its email) and per client address within a window. */
export interface SignInLimits {
  windowMs: number;
  maxPerEmail: number;
  maxPerIp: number;
}

/** An address longer than any IP address is cut: the token service takes at most 64 characters. */
const MAX_ADDRESS_LENGTH = 64;

/**
 * What the console sends with a password check so that the token service counts the attempt.
 * The counts live in the token service's database, shared by every console replica, and each
 * attempt is counted before its password is checked, in one transaction: concurrent attempts
 * cannot all slip under the limit. A correct password clears the account's count and gives the
 * address its slot back, so only failures add up.
 */
export function signInThrottle(limits: SignInLimits, clientAddress: string) {
  return {
    client_address: clientAddress.slice(0, MAX_ADDRESS_LENGTH),
    window_seconds: Math.max(1, Math.ceil(limits.windowMs / 1000)),
    max_per_account: limits.maxPerEmail,
    max_per_address: limits.maxPerIp,
  };
}

/** "3 minutes", "1 minute", "45 seconds": how long to wait, as a person would say it. */
export function describeWait(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
