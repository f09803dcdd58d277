import { TokenBuckets } from '@worklane/http/token-buckets';

/**
 * How many deliveries each team's events may create, per second and at once, in this replica: a
 * token bucket per team, counted in deliveries (an event to 100 webhooks costs 100). An event is
 * let through while its team's bucket is not empty, even when it costs more than is left (the team
 * then owes it and waits longer), so an event with more webhooks than the burst still goes. Once a
 * team's event had to wait, every later event of that team waits behind it until its backlog is
 * empty, so its waiting events are fanned out in the order they were published.
 */
export class FanOutBudget {
  private readonly buckets: TokenBuckets;
  private readonly waiting = new Set<number>();

  constructor(perSecond: number, burst: number, /** Seconds on a monotonic clock. */ now?: () => number) {
    this.buckets = new TokenBuckets(perSecond, burst, now);
  }

  get enabled(): boolean {
    return this.buckets.enabled;
  }

  /** Whether an event creating `deliveries` deliveries of `teamId` goes now; spends them if so. */
  admit(teamId: number, deliveries: number): boolean {
    if (!this.enabled || deliveries === 0) return true;
    if (this.waiting.has(teamId)) return false;
    if (this.buckets.level(teamId) <= 0) {
      this.waiting.add(teamId);
      return false;
    }
    this.buckets.spend(teamId, deliveries);
    return true;
  }

  /** Deliveries `teamId` may create now; 0 while it owes. */
  available(teamId: number): number {
    if (!this.enabled) return Number.POSITIVE_INFINITY;
    return Math.max(0, Math.floor(this.buckets.level(teamId)));
  }

  /** Spends deliveries created from the backlog. */
  spend(teamId: number, deliveries: number): void {
    if (this.enabled) this.buckets.spend(teamId, deliveries);
  }

  /** Milliseconds until `teamId` may create a delivery again (0 when it may now). */
  msUntilAvailable(teamId: number): number {
    return this.enabled ? Math.ceil(this.buckets.msUntil(teamId, 1)) : 0;
  }

  /**
   * The teams with events in the backlog, as the database says: a team whose backlog emptied goes
   * straight through again, and one that another replica queued for waits here too.
   */
  setWaiting(teamIds: Iterable<number>): void {
    this.waiting.clear();
    for (const teamId of teamIds) this.waiting.add(teamId);
  }

  /** `teamId`'s backlog is empty: its next event goes straight through (budget permitting). */
  stopWaiting(teamId: number): void {
    this.waiting.delete(teamId);
  }

  /** Forgets full buckets of teams that are not waiting: a full bucket and no bucket are the same. */
  sweep(): void {
    this.buckets.sweep((teamId) => this.waiting.has(teamId));
  }
}
