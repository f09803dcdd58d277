import { createHash } from 'node:crypto';
import { grpc } from '@worklane/grpc';
import { createLogger } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';
import { bearerToken, TokenAuthenticator } from './authenticate';

describe('bearerToken', () => {
  const token = 'wl_0123456789abcdefghijABCDEFGHIJ012345';

  it('reads the token of an Authorization: Bearer header, scheme in any case', () => {
    expect(bearerToken(`Bearer ${token}`)).toBe(token);
    expect(bearerToken(`bearer ${token}`)).toBe(token);
    expect(bearerToken(`BEARER   ${token} `)).toBe(token);
  });

  it.each([undefined, '', 'Bearer', 'Bearer ', `Basic ${token}`, `Bearer ${token} extra`, `Bearer ${'a'.repeat(257)}`, 'Bearer wl_ä', `Token ${token}`])(
    'finds no token in %p',
    (header) => {
      expect(bearerToken(header)).toBeUndefined();
    },
  );
});

describe('TokenAuthenticator cache', () => {
  const token = 'wl_0123456789abcdefghijABCDEFGHIJ012345';
  const header = (value = token) => `Bearer ${value}`;
  type Done = (error: Partial<grpc.ServiceError> | null, response?: object) => void;

  /** A token service whose answers the test gives by hand, and a clock it steps by hand. */
  function setup(options: { ttlMs?: number; maxEntries?: number } = {}) {
    let clock = 1_000;
    const calls: { token: string; cache_ttl_ms: number; done: Done; sentAt: number }[] = [];
    const client = {
      Authenticate: (request: { token: string; cache_ttl_ms: number }, _metadata: unknown, _options: unknown, done: Done) => {
        calls.push({ ...request, done, sentAt: clock });
      },
    } as unknown as tokenV1.TokenServiceClient;
    const authenticator = new TokenAuthenticator(client, 1_000, createLogger('gateway', 'silent'), {
      ttlMs: options.ttlMs ?? 1_000,
      maxEntries: options.maxEntries,
      now: () => clock,
    });
    const accept = (index: number, leaseMs: number, tokenId = 7) => calls[index]!.done(null, { token_id: tokenId, team_id: 2, user_id: 3, cache_ttl_ms: leaseMs });
    const refuse = (index: number) => calls[index]!.done({ code: grpc.status.UNAUTHENTICATED, details: 'invalid token' });
    const fail = (index: number) => calls[index]!.done({ code: grpc.status.UNAVAILABLE, details: 'down' });
    const advance = (ms: number) => {
      clock += ms;
    };
    return { authenticator, calls, accept, refuse, fail, advance };
  }
  const flush = () => new Promise((resolve) => setImmediate(resolve));
  const authenticated = { outcome: 'authenticated', identity: { teamId: 2, userId: 3, tokenId: 7 } };

  it('asks for the configured lease and reuses an acceptance until the lease, counted from when the call was sent, runs out', async () => {
    const { authenticator, calls, accept, advance } = setup({ ttlMs: 1_000 });
    const first = authenticator.authenticate(header());
    expect(calls).toHaveLength(1);
    expect(calls[0]!.cache_ttl_ms).toBe(1_000);
    advance(300); // the answer takes 300 ms to come back
    accept(0, 1_000);
    expect(await first).toEqual(authenticated);

    advance(699); // 999 ms after the call was sent
    expect(await authenticator.authenticate(header())).toEqual(authenticated);
    expect(calls).toHaveLength(1);

    advance(1); // 1000 ms after it was sent: the token service's lease may have run out
    const again = authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
    accept(1, 1_000);
    expect(await again).toEqual(authenticated);
  });

  it('keeps an acceptance no longer than the lease granted, nor than the one asked for', async () => {
    const { authenticator, calls, accept, advance } = setup({ ttlMs: 500 });
    const first = authenticator.authenticate(header());
    accept(0, 200);
    await first;
    advance(199);
    await authenticator.authenticate(header());
    expect(calls).toHaveLength(1);
    advance(1);
    const second = authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
    accept(1, 60_000); // more than asked for: still kept for 500 ms at most
    await second;
    advance(499);
    await authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
    advance(1);
    void authenticator.authenticate(header());
    expect(calls).toHaveLength(3);
  });

  it('does not cache an acceptance without a lease, a refusal or unavailability', async () => {
    const { authenticator, calls, accept, refuse, fail } = setup();
    const noLease = authenticator.authenticate(header());
    accept(0, 0);
    expect(await noLease).toEqual(authenticated);

    const refused = authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
    refuse(1);
    expect(await refused).toEqual({ outcome: 'refused' });

    const unavailable = authenticator.authenticate(header());
    expect(calls).toHaveLength(3);
    fail(2);
    expect(await unavailable).toEqual({ outcome: 'unavailable' });

    void authenticator.authenticate(header());
    expect(calls).toHaveLength(4);
    expect(authenticator.cachedTokens).toBe(0);
  });

  it('refuses a malformed header without asking', async () => {
    const { authenticator, calls } = setup();
    expect(await authenticator.authenticate('Basic abc')).toEqual({ outcome: 'refused' });
    expect(calls).toHaveLength(0);
  });

  it('shares one call between concurrent misses for the same token', async () => {
    const { authenticator, calls, accept } = setup();
    const answers = [authenticator.authenticate(header()), authenticator.authenticate(header()), authenticator.authenticate(header())];
    expect(calls).toHaveLength(1);
    accept(0, 1_000);
    expect(await Promise.all(answers)).toEqual([authenticated, authenticated, authenticated]);
  });

  it('does not hand a shared acceptance to a request that started after its lease ran out', async () => {
    const { authenticator, calls, accept, advance } = setup();
    const first = authenticator.authenticate(header());
    advance(1_500); // a slow answer: a revocation may have waited out the lease meanwhile
    const late = authenticator.authenticate(header());
    expect(calls).toHaveLength(1);
    accept(0, 1_000);
    expect(await first).toEqual(authenticated); // started before the lease ran out
    await flush();
    expect(calls).toHaveLength(2); // the late request asks again
    calls[1]!.done({ code: grpc.status.UNAUTHENTICATED, details: 'invalid token' });
    expect(await late).toEqual({ outcome: 'refused' });
    expect(authenticator.cachedTokens).toBe(0); // the stale acceptance was not cached either
  });

  it('keys the cache by token and holds at most maxEntries tokens, dropping the least recently used', async () => {
    const { authenticator, calls, accept } = setup({ maxEntries: 2 });
    const tokens = ['wl_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'wl_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', 'wl_cccccccccccccccccccccccccccccccccccc'];
    for (const [index, value] of tokens.slice(0, 2).entries()) {
      const answer = authenticator.authenticate(header(value));
      accept(index, 1_000, index + 1);
      await answer;
    }
    await authenticator.authenticate(header(tokens[0])); // a is now the most recently used
    expect(calls).toHaveLength(2);
    const third = authenticator.authenticate(header(tokens[2]));
    accept(2, 1_000, 3);
    await third;
    expect(authenticator.cachedTokens).toBe(2);
    await authenticator.authenticate(header(tokens[0]));
    expect(calls).toHaveLength(3); // a stayed
    void authenticator.authenticate(header(tokens[1]));
    expect(calls).toHaveLength(4); // b was pushed out
  });

  it('asks on every request when the cache is off', async () => {
    const { authenticator, calls, accept } = setup({ ttlMs: 0 });
    const first = authenticator.authenticate(header());
    expect(calls[0]!.cache_ttl_ms).toBe(0);
    accept(0, 0);
    await first;
    void authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
  });
});

describe('TokenAuthenticator following the token change feed', () => {
  const token = 'wl_0123456789abcdefghijABCDEFGHIJ012345';
  const header = (value = token) => `Bearer ${value}`;
  type Done = (error: Partial<grpc.ServiceError> | null, response?: object) => void;

  function setup(ttlMs = 60_000) {
    let clock = 1_000;
    const calls: { token: string; cache_ttl_ms: number; done: Done }[] = [];
    const client = {
      Authenticate: (request: { token: string; cache_ttl_ms: number }, _metadata: unknown, _options: unknown, done: Done) => calls.push({ ...request, done }),
    } as unknown as tokenV1.TokenServiceClient;
    const authenticator = new TokenAuthenticator(client, 1_000, createLogger('gateway', 'silent'), { ttlMs, followsChanges: true, now: () => clock });
    const accept = (index: number, leaseMs = 0, tokenId = 7, teamId = 2) => calls[index]!.done(null, { token_id: tokenId, team_id: teamId, user_id: 3, cache_ttl_ms: leaseMs });
    const advance = (ms: number) => {
      clock += ms;
    };
    /** The feed started and its last complete read holds for `ms` from now. */
    const trust = (ms: number) => authenticator.trustUntil(clock + ms);
    return { authenticator, calls, accept, advance, trust };
  }
  const identity = (tokenId = 7, teamId = 2) => ({ outcome: 'authenticated', identity: { teamId, userId: 3, tokenId } });

  async function cacheOne(context: ReturnType<typeof setup>) {
    const answer = context.authenticator.authenticate(header());
    context.accept(context.calls.length - 1);
    expect(await answer).toEqual(identity());
  }

  it('asks without a lease while the feed is trusted and reuses the acceptance up to the cache TTL', async () => {
    const context = setup(60_000);
    const { authenticator, calls, advance, trust } = context;
    authenticator.followChanges();
    trust(1_000);
    await cacheOne(context);
    expect(calls[0]!.cache_ttl_ms).toBe(0);
    expect((calls[0] as unknown as { caller_reports_use: boolean }).caller_reports_use).toBe(true);
    // Before 75% of the TTL nothing is asked again.
    for (let step = 0; step < 44; step++) {
      advance(1_000);
      trust(1_000); // the feed keeps reading
      expect(await authenticator.authenticate(header())).toEqual(identity());
    }
    expect(calls).toHaveLength(1);
    advance(16_000); // 60 s after the call was sent, and no request came to renew it
    trust(1_000);
    void authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
  });

  it('renews an acceptance in use with the feed’s next call, answering from the cache meanwhile', async () => {
    const context = setup(60_000);
    const { authenticator, calls, advance, trust } = context;
    authenticator.followChanges();
    trust(100_000);
    await cacheOne(context);
    expect(authenticator.takeRenewals(10)).toEqual([]);
    advance(54_000); // past the entry's refresh point (75% to 90% of the TTL)
    expect(await authenticator.authenticate(header())).toEqual(identity()); // served at once...
    expect(await authenticator.authenticate(header())).toEqual(identity());
    expect(calls).toHaveLength(1); // ...and no Authenticate call: the feed checks it
    const sha256 = createHash('sha256').update(token).digest('hex');
    const renewals = authenticator.takeRenewals(10);
    expect(renewals.map(({ tokenId, sha256 }) => ({ tokenId, sha256 }))).toEqual([{ tokenId: 7, sha256 }]);
    expect(authenticator.takeRenewals(10)).toEqual([]); // once
    const sentAt = 55_000;
    authenticator.renewed(renewals, [{ token_id: 7, team_id: 2, user_id: 3 }], sentAt);
    advance(10_000); // past the first answer's TTL, within the renewed one's
    expect(await authenticator.authenticate(header())).toEqual(identity());
    expect(calls).toHaveLength(1);
  });

  it('drops a renewed acceptance the token service no longer holds, or holds for another team', async () => {
    for (const answer of [[], [{ token_id: 7, team_id: 9, user_id: 3 }]]) {
      const context = setup(60_000);
      const { authenticator, calls, advance, trust } = context;
      authenticator.followChanges();
      trust(100_000);
      await cacheOne(context);
      advance(54_000);
      await authenticator.authenticate(header());
      authenticator.renewed(authenticator.takeRenewals(10), answer, 55_000);
      expect(authenticator.cachedTokens).toBe(0);
      void authenticator.authenticate(header());
      expect(calls).toHaveLength(2);
    }
  });

  it('does not renew an acceptance the feed dropped after the renewal was sent', async () => {
    const context = setup(60_000);
    const { authenticator, calls, accept, advance, trust } = context;
    authenticator.followChanges();
    trust(100_000);
    await cacheOne(context);
    advance(54_000);
    await authenticator.authenticate(header());
    const renewals = authenticator.takeRenewals(10);
    const sentAt = 55_000;
    advance(10);
    authenticator.forget([7]);
    // Cached again by a new lookup that the change did not overtake...
    advance(10);
    const again = authenticator.authenticate(header());
    accept(1);
    expect(await again).toEqual(identity());
    // ...which an answer sent before the change leaves alone.
    authenticator.renewed(renewals, [], sentAt);
    expect(authenticator.cachedTokens).toBe(1);
    expect(calls).toHaveLength(2);
  });

  it('serves nothing unleased once the feed’s lease has run out, and asks on a lease meanwhile', async () => {
    const context = setup();
    const { authenticator, calls, accept, advance, trust } = context;
    authenticator.followChanges();
    trust(500);
    await cacheOne(context);
    advance(500); // no newer complete read of the feed: a revocation may have returned meanwhile
    const leased = authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
    expect(calls[1]!.cache_ttl_ms).toBe(60_000);
    accept(1, 1_000);
    expect(await leased).toEqual(identity());
    advance(999);
    expect(await authenticator.authenticate(header())).toEqual(identity()); // on the token's own lease
    expect(calls).toHaveLength(2);
    advance(1);
    void authenticator.authenticate(header());
    expect(calls).toHaveLength(3);
  });

  it('drops a token the feed lists, and does not cache an answer sent before the feed dropped it', async () => {
    const context = setup();
    const { authenticator, calls, accept, advance, trust } = context;
    authenticator.followChanges();
    trust(10_000);
    await cacheOne(context);
    authenticator.forget([7]);
    expect(authenticator.cachedTokens).toBe(0);

    const inFlight = authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
    advance(10);
    authenticator.forget([7]); // the feed saw a change the token service's answer may predate
    advance(10);
    accept(1);
    expect(await inFlight).toEqual(identity()); // its own request started before the change was known
    expect(authenticator.cachedTokens).toBe(0);
    void authenticator.authenticate(header());
    expect(calls).toHaveLength(3);
  });

  it('honours a token moved to another team: the next request after the feed lists it gets the new identity', async () => {
    const context = setup();
    const { authenticator, calls, accept, advance, trust } = context;
    authenticator.followChanges();
    trust(10_000);
    await cacheOne(context);
    authenticator.forget([7]);
    advance(1);
    const moved = authenticator.authenticate(header());
    accept(calls.length - 1, 0, 7, 9);
    expect(await moved).toEqual(identity(7, 9));
    expect(await authenticator.authenticate(header())).toEqual(identity(7, 9));
  });

  it('does not cache unleased an answer to a call sent before the feed started', async () => {
    const { authenticator, calls, accept, advance, trust } = setup();
    trust(10_000);
    const early = authenticator.authenticate(header());
    advance(5);
    authenticator.followChanges();
    accept(0);
    expect(await early).toEqual(identity());
    expect(authenticator.cachedTokens).toBe(0);
    void authenticator.authenticate(header());
    expect(calls).toHaveLength(2);
  });

  it('forgets everything when the feed starts again', async () => {
    const context = setup();
    context.authenticator.followChanges();
    context.trust(10_000);
    await cacheOne(context);
    context.authenticator.followChanges();
    expect(context.authenticator.cachedTokens).toBe(0);
  });

  it('reports a token used from the cache once a minute, and takes back a report that failed', async () => {
    const context = setup(600_000);
    const { authenticator, advance, trust } = context;
    authenticator.followChanges();
    trust(1_000_000);
    await cacheOne(context);
    expect(authenticator.takeUsedTokens(10)).toEqual([7]); // the lookup's own use, which the token service left to us
    await authenticator.authenticate(header());
    expect(authenticator.takeUsedTokens(10)).toEqual([]);
    advance(60_000);
    await authenticator.authenticate(header());
    await authenticator.authenticate(header());
    const used = authenticator.takeUsedTokens(10);
    expect(used).toEqual([7]);
    authenticator.returnUsedTokens(used);
    expect(authenticator.takeUsedTokens(10)).toEqual([7]);
    expect(authenticator.takeUsedTokens(10)).toEqual([]);
  });
});
