import { RateLimiter, RefusalPacing, extraResponseUnits, rateLimitHeaders, takeEach } from './rate-limit';

function limiter(rate: number, burst: number) {
  let clock = 1000;
  const instance = new RateLimiter(rate, burst, () => clock);
  return { instance, advance: (seconds: number) => void (clock += seconds) };
}

describe('RateLimiter', () => {
  it('allows a burst, then refuses with the seconds until the next request is allowed', () => {
    const { instance } = limiter(0.5, 3);
    expect([1, 2, 3].map(() => instance.take(7).allowed)).toEqual([true, true, true]);
    expect(instance.take(7)).toEqual({ allowed: false, retryAfterSeconds: 2, waitMs: 2000 });
  });

  it('refills at the sustained rate, never above the burst', () => {
    const { instance, advance } = limiter(10, 2);
    instance.take(1);
    instance.take(1);
    expect(instance.take(1).allowed).toBe(false);
    advance(0.1);
    expect(instance.take(1).allowed).toBe(true);
    advance(3600);
    expect([1, 2, 3].map(() => instance.take(1).allowed)).toEqual([true, true, false]);
  });

  it('keeps each key to its own allowance', () => {
    const { instance } = limiter(1, 1);
    expect(instance.take(1).allowed).toBe(true);
    expect(instance.take(1).allowed).toBe(false);
    expect(instance.take(2).allowed).toBe(true);
  });

  it('rounds Retry-After up to whole seconds, at least one', () => {
    const { instance, advance } = limiter(4, 1);
    instance.take(1);
    advance(0.2);
    expect(instance.take(1)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('is off at a rate of 0', () => {
    const { instance } = limiter(0, 1);
    expect(instance.enabled).toBe(false);
    expect(Array.from({ length: 50 }, () => instance.take(1).allowed).every(Boolean)).toBe(true);
    expect(instance.size).toBe(0);
  });

  it('forgets refilled buckets when swept, so memory follows active tokens only', () => {
    const { instance, advance } = limiter(1, 2);
    instance.take(1);
    instance.take(2);
    instance.take(2);
    advance(1);
    instance.sweep();
    expect(instance.size).toBe(1);
    advance(1);
    instance.sweep();
    expect(instance.size).toBe(0);
  });
});

describe('takeEach', () => {
  it('spends from every allowance only when all allow the request', () => {
    const perToken = limiter(1, 5);
    const perTeam = limiter(1, 2);
    const both = () =>
      takeEach([
        [perToken.instance, 1],
        [perTeam.instance, 9],
      ]);
    expect(both().allowed).toBe(true);
    expect(both().allowed).toBe(true);
    // The team's allowance is spent: refused, and the token's allowance is left as it was.
    expect(both()).toEqual({ allowed: false, retryAfterSeconds: 1, waitMs: 1000 });
    expect([1, 2, 3].map(() => perToken.instance.take(1).allowed)).toEqual([true, true, true]);
    expect(perToken.instance.take(1).allowed).toBe(false);
  });

  it('answers the longest wait among the allowances that refuse', () => {
    const slow = limiter(0.1, 1);
    const fast = limiter(1, 1);
    slow.instance.take(1);
    fast.instance.take(1);
    expect(
      takeEach([
        [fast.instance, 1],
        [slow.instance, 1],
      ]),
    ).toEqual({ allowed: false, retryAfterSeconds: 10, waitMs: 10_000 });
  });
});

describe('response cost', () => {
  it('counts a response as one request per started unit of bytes', () => {
    expect(extraResponseUnits(0, 65_536)).toBe(0);
    expect(extraResponseUnits(65_536, 65_536)).toBe(0);
    expect(extraResponseUnits(65_537, 65_536)).toBe(1);
    expect(extraResponseUnits(900_000, 65_536)).toBe(13);
    expect(extraResponseUnits(900_000, 0)).toBe(0);
  });

  it('leaves the allowance in debt after a large response, so the next requests wait for it', () => {
    const { instance, advance } = limiter(10, 5);
    expect(instance.take(1).allowed).toBe(true);
    instance.spend(1, 13);
    expect(instance.take(1)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    advance(0.9);
    expect(instance.take(1).allowed).toBe(false);
    advance(0.2);
    expect(instance.take(1).allowed).toBe(true);
  });
});

describe('RefusalPacing', () => {
  it('holds a refusal until the allowance has room, at most its maximum, and at most so many at once', async () => {
    const pacing = new RefusalPacing(5_000, 1);
    let settled = 0;
    const first = pacing.hold(50).then(() => (settled += 1));
    expect(pacing.holding).toBe(1);
    // Over the limit of held refusals: answered at once.
    await pacing.hold(10_000);
    expect(settled).toBe(0);
    await first;
    expect(pacing.holding).toBe(0);
    // Nothing to wait for, or pacing off.
    await new RefusalPacing(0, 10).hold(10_000);
    await pacing.hold(0);
  });
});

describe('shared allowance', () => {
  it('reports what each key spent since the last report, and the keys that only want the shared level', () => {
    const { instance, advance } = limiter(1, 10);
    instance.share();
    instance.take(1);
    instance.spend(1, 2);
    instance.take(2);
    expect([...instance.takeUsage()]).toEqual([
      [1, 3],
      [2, 1],
    ]);
    // Nothing spent since: both still have a bucket and ask for their level.
    expect([...instance.takeUsage()]).toEqual([
      [1, 0],
      [2, 0],
    ]);
    advance(60);
    instance.sweep();
    expect([...instance.takeUsage()]).toEqual([]);
  });

  it('takes the shared level less what it spent since it sent its report', () => {
    const { instance } = limiter(0.001, 10);
    instance.share();
    instance.take(1);
    const sent = instance.takeUsage();
    instance.take(1);
    instance.take(1);
    // Other replicas spent 6: the shared bucket holds 10 - 1 - 6 = 3, of which 2 are already gone here.
    instance.applyShared(1, 3);
    expect(instance.state(1)?.remaining).toBe(1);
    expect(sent.get(1)).toBe(1);
    expect(instance.takeUsage().get(1)).toBe(2);
  });

  it('gives back what a failed sync could not report, and keeps it until reported', () => {
    const { instance, advance } = limiter(100, 10);
    instance.share();
    instance.take(1);
    const usage = instance.takeUsage();
    instance.returnUsage(usage);
    advance(60);
    instance.sweep();
    expect(instance.size).toBe(1);
    expect(instance.takeUsage().get(1)).toBe(1);
  });

  it('counts nothing for a sync unless shared', () => {
    const { instance } = limiter(1, 10);
    instance.take(1);
    expect(instance.takeUsage().size).toBe(0);
  });
});

describe('rateLimitHeaders', () => {
  it('tells the allowance with fewest units left: its burst, whole units left and seconds until full', () => {
    const perToken = limiter(10, 100);
    const perTeam = limiter(2, 20);
    const allowances = [
      [perToken.instance, 1],
      [perTeam.instance, 7],
    ] as const;
    expect(takeEach(allowances).allowed).toBe(true);
    expect(rateLimitHeaders(allowances)).toEqual({ 'RateLimit-Limit': '20', 'RateLimit-Remaining': '19', 'RateLimit-Reset': '1' });
    perTeam.instance.spend(7, 9);
    expect(rateLimitHeaders(allowances)).toEqual({ 'RateLimit-Limit': '20', 'RateLimit-Remaining': '10', 'RateLimit-Reset': '5' });
    perToken.instance.spend(1, 95);
    expect(rateLimitHeaders(allowances)).toEqual({ 'RateLimit-Limit': '100', 'RateLimit-Remaining': '4', 'RateLimit-Reset': '10' });
  });

  it('on a refusal says 0 left and resets when Retry-After says', () => {
    const { instance } = limiter(0.5, 1);
    const allowances = [[instance, 1]] as const;
    takeEach(allowances);
    const refusal = takeEach(allowances);
    expect(refusal.allowed).toBe(false);
    expect(rateLimitHeaders(allowances, refusal)).toEqual({ 'RateLimit-Limit': '1', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '2' });
  });

  it('says nothing when no allowance limits', () => {
    expect(rateLimitHeaders([[limiter(0, 1).instance, 1]])).toBeUndefined();
  });
});
