interface Bucket {
  deliveries: number;
  updatedAt: number;
}

/**
 * How many deliveries each team's events may create, per second and at once, in this replica: a
 * token bucket per team, counted in deliveries (an event to 100 webhooks costs 100). An event is
 * let through while its team's bucket is not empty, even when it costs more than is left (the team
 * then owes it and waits longer), so an event with more webhooks than the burst still goes. Once a
 * team's event had to wait, every later event of that team waits behind it until its backlog is
 * empty, so its waiting events are fanned out in the order they were published.
 */
export class FanOutBudget {
  private readonly buckets = new Map<number, Bucket>();
  private readonly waiting = new Set<number>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    /** Seconds on a monotonic clock. */
    private readonly now: () => number = () => performance.now() / 1000,
  ) {}

  get enabled(): boolean {
    return this.perSecond > 0;
  }

  /** Whether an event creating `deliveries` deliveries of `teamId` goes now; spends them if so. */
  admit(teamId: number, deliveries: number): boolean {
    if (!this.enabled || deliveries === 0) return true;
    if (this.waiting.has(teamId)) return false;
    const bucket = this.refill(teamId);
    if (bucket.deliveries <= 0) {
      this.waiting.add(teamId);
      return false;
    }
    bucket.deliveries -= deliveries;
    return true;
  }

  /** Deliveries `teamId` may create now; 0 while it owes. */
  available(teamId: number): number {
    if (!this.enabled) return Number.POSITIVE_INFINITY;
    return Math.max(0, Math.floor(this.refill(teamId).deliveries));
  }

  /** Spends deliveries created from the backlog. */
  spend(teamId: number, deliveries: number): void {
    if (this.enabled) this.refill(teamId).deliveries -= deliveries;
  }

  /** Milliseconds until `teamId` may create a delivery again (0 when it may now). */
  msUntilAvailable(teamId: number): number {
    if (!this.enabled) return 0;
    const owed = 1 - this.refill(teamId).deliveries;
    return owed <= 0 ? 0 : Math.ceil((owed / this.perSecond) * 1000);
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

  isWaiting(teamId: number): boolean {
    return this.waiting.has(teamId);
  }

  /** Forgets full buckets of teams that are not waiting: a full bucket and no bucket are the same. */
  sweep(): void {
    for (const teamId of this.buckets.keys()) {
      if (!this.waiting.has(teamId) && this.refill(teamId).deliveries >= this.burst) this.buckets.delete(teamId);
    }
  }

  private refill(teamId: number): Bucket {
    const now = this.now();
    let bucket = this.buckets.get(teamId);
    if (!bucket) {
      bucket = { deliveries: this.burst, updatedAt: now };
      this.buckets.set(teamId, bucket);
    } else {
      bucket.deliveries = Math.min(this.burst, bucket.deliveries + (now - bucket.updatedAt) * this.perSecond);
      bucket.updatedAt = now;
    }
    return bucket;
  }
}
