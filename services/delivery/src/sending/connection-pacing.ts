import { TokenBuckets } from '@worklane/http/token-buckets';

/** DELIVERY_TEAM_CONNECTIONS_PER_SECOND's default: new receiver connections one team opens per second. */
export const DEFAULT_TEAM_CONNECTIONS_PER_SECOND = 50;
/** DELIVERY_TEAM_CONNECTIONS_BURST's default: new receiver connections one team opens at once. */
export const DEFAULT_TEAM_CONNECTIONS_BURST = 10;

/**
 * Paces the new connections each team's attempts open to its receivers. Opening a connection
 * (the TCP connection, and for HTTPS the handshake's key exchange and certificate check) costs the
 * sender far more than a request on a kept-alive one, and a team's receivers that fail together
 * make their next attempts need new connections together: 50 endpoints that time out in the same
 * second would open 50 connections in the next one, while every other team's attempts wait for
 * the same thread. A team may open `burst` connections at once and `perSecond` after that; an
 * attempt past them waits its place in time, in the slot it already holds, so the wave becomes a
 * stream that other teams' work interleaves with, and the attempts it spreads end spread too.
 * Attempts on kept-alive connections are never held back.
 */
export class ConnectionPacing {
  private readonly buckets: TokenBuckets;

  /** A rate of 0 turns pacing off. `now` is seconds on a monotonic clock. */
  constructor(perSecond: number, burst: number, now?: () => number) {
    this.buckets = new TokenBuckets(perSecond, burst, now);
  }

  /** Teams that have a bucket: those that opened connections lately. */
  get teams(): number {
    return this.buckets.size;
  }

  /**
   * Milliseconds an attempt of `teamId` that is about to open a new connection waits first (0:
   * none). Its place is taken now, so attempts asking together are spread one after another.
   */
  delayMs(teamId: number): number {
    if (!this.buckets.enabled) return 0;
    const wait = this.buckets.msUntil(teamId, 1);
    this.buckets.spend(teamId, 1);
    return wait;
  }

  /** Forgets the teams whose burst is whole again (a full bucket and none are the same). */
  sweep(): void {
    this.buckets.sweep();
  }
}
