import { createLogger } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';
import { TokenChangeFeed } from './token-changes';

type Answer = Partial<tokenV1.ListTokenChangesResponse__Output>;

function setUp(answers: (Answer | Error)[], due: { tokenId: number; key: string; sha256: string }[] = []) {
  let clock = 5_000;
  const requests: tokenV1.ListTokenChangesRequest[] = [];
  const events: string[] = [];
  const client = {
    ListTokenChanges(request: tokenV1.ListTokenChangesRequest, _metadata: unknown, _options: unknown, done: (error: Error | null, response?: object) => void) {
      requests.push(request);
      clock += 20; // each call takes 20 ms
      const answer = answers.shift() ?? {};
      if (answer instanceof Error) return done(answer);
      done(null, { token_ids: [], cursor: 1, more: false, reset: false, cache_valid_ms: 1_000, ...answer });
    },
  };
  let used = [11, 12];
  const authenticator = {
    followChanges: () => events.push('follow'),
    forget: (ids: Iterable<number>) => events.push(`forget ${[...ids].join(',')}`),
    trustUntil: (until: number) => events.push(`trust ${until}`),
    takeUsedTokens: () => {
      const taken = used;
      used = [];
      return taken;
    },
    returnUsedTokens: (ids: readonly number[]) => (used = [...ids, ...used]),
    takeRenewals: () => due.splice(0),
    renewed: (asked: readonly { tokenId: number }[], identities: readonly { token_id: number }[], sentAt: number) =>
      events.push(`renewed ${asked.map((renewal) => renewal.tokenId).join(',')}: ${identities.map((identity) => identity.token_id).join(',')} at ${sentAt}`),
  };
  const feed = new TokenChangeFeed({ client: client as never, authenticator, intervalMs: 200, timeoutMs: 1_000, logger: createLogger('gateway', 'silent'), now: () => clock });
  return { feed, requests, events, now: () => clock };
}

describe('TokenChangeFeed', () => {
  it('starts from the cursor of its first answer, then drops each change and trusts the cache for the lease from when it asked', async () => {
    const { feed, requests, events } = setUp([{ cursor: 40 }, { token_ids: [3, 4], cursor: 42, cache_valid_ms: 800 }]);
    await feed.pass();
    expect(requests[0]).toEqual({ cursor: 0, used_token_ids: [11, 12], renew: [] });
    expect(events).toEqual(['follow', 'forget ', 'trust 6000']);
    await feed.pass();
    expect(requests[1]).toEqual({ cursor: 40, used_token_ids: [], renew: [] });
    expect(events.slice(3)).toEqual(['forget 3,4', 'trust 5820']);
  });

  it('reads every page before trusting, with the lease of the first', async () => {
    const { feed, requests, events } = setUp([
      { cursor: 10 },
      { token_ids: [1], cursor: 20, more: true, cache_valid_ms: 900 },
      { token_ids: [2], cursor: 30, cache_valid_ms: 1_000 },
    ]);
    await feed.pass();
    events.length = 0;
    await feed.pass();
    expect(requests.map((request) => request.cursor)).toEqual([0, 10, 20]);
    expect(events).toEqual(['forget 1', 'forget 2', 'trust 5920']);
  });

  it('forgets everything when told its cursor is older than the changes kept', async () => {
    const { feed, events } = setUp([{ cursor: 10 }, { reset: true, cursor: 500 }]);
    await feed.pass();
    events.length = 0;
    await feed.pass();
    expect(events[0]).toBe('follow');
  });

  it('trusts nothing on a failed call and reports its used tokens with the next one', async () => {
    const { feed, requests, events } = setUp([new Error('unavailable')]);
    await expect(feed.pass()).rejects.toThrow('unavailable');
    expect(events).toEqual([]);
    await feed.pass();
    expect(requests[1]!.used_token_ids).toEqual([11, 12]);
  });

  it('sends the acceptances due for renewal with its first call, and hands the answer over before that call’s changes', async () => {
    const sha256 = 'ab'.repeat(32);
    const { feed, requests, events } = setUp(
      [
        { cursor: 10, more: true, token_ids: [5], renewed: [{ token_id: 7, team_id: 2, user_id: 3, cache_ttl_ms: 0 }], renew_answered: true },
        { cursor: 20, token_ids: [6] },
      ],
      [{ tokenId: 7, key: 'key', sha256 }],
    );
    await feed.pass();
    expect(requests.map((request) => request.renew)).toEqual([[{ token_id: 7, token_sha256: sha256 }], []]);
    expect(events).toEqual(['follow', 'renewed 7: 7 at 5000', 'forget 5', 'forget 6', 'trust 6000']);
  });

  it('leaves the entries alone when the token service did not answer the renewals', async () => {
    const { feed, events } = setUp([{ cursor: 10 }], [{ tokenId: 7, key: 'key', sha256: 'ab'.repeat(32) }]);
    await feed.pass();
    expect(events).toEqual(['follow', 'forget ', 'trust 6000']);
  });

  it('grants no trust when the token service grants no lease', async () => {
    const { feed, events } = setUp([{ cursor: 3, cache_valid_ms: 0 }]);
    await feed.pass();
    expect(events).toEqual(['follow', 'forget ']);
  });
});
