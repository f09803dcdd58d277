// The token change feed (ListTokenChanges) in-process against a real PostgreSQL database, called as
// the gateway calls it: which changes it lists, the lease RevokeToken waits out, the retention.
import { createHash } from 'node:crypto';
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { loadProto, type TokenProto, type tokenV1 } from '@worklane/proto';
import { signerOf } from '@worklane/testing';
import { pruneTokenChanges } from '../src/data/token-changes';
import { startInProcessTokenService, type InProcessTokenService } from './support/in-process';

jest.setTimeout(60_000);

let service: InProcessTokenService;
let tokens: tokenV1.TokenServiceClient;
let gateway: tokenV1.TokenServiceClient;
let accounts: tokenV1.AccountServiceClient;

beforeAll(async () => {
  service = await startInProcessTokenService('token-changes-test', { poolMax: 5, deps: { tokenChangesLeaseMs: 1_000 } });
  const { v1 } = loadProto<TokenProto>('token').worklane.token;
  const console = signerOf(service.keys, 'console');
  tokens = createGrpcClient(v1.TokenService, service.address, { caller: 'console', signingKey: console.key });
  accounts = createGrpcClient(v1.AccountService, service.address, { caller: 'console', signingKey: console.key });
  gateway = createGrpcClient(v1.TokenService, service.address, { caller: 'gateway', signingKey: signerOf(service.keys, 'gateway').key });
});

afterAll(async () => {
  tokens?.close();
  gateway?.close();
  accounts?.close();
  await service?.stop();
});

type Client = Record<string, (...args: any[]) => unknown>;
const call = <Response>(client: unknown, method: string, request: object) =>
  unaryCall<Response>((metadata, options, done) => (client as Client)[method]!(request, metadata, options, done));
const changes = (cursor: number, used: number[] = []) => call<tokenV1.ListTokenChangesResponse__Output>(gateway, 'ListTokenChanges', { cursor, used_token_ids: used });

let sequence = 0;
async function teamWithToken() {
  sequence++;
  const user = await call<tokenV1.User__Output>(accounts, 'CreateUser', { email: `feed${sequence}-${Date.now()}@example.test`, password: 'correct horse', name: '' });
  const team = await call<tokenV1.Team__Output>(accounts, 'CreateTeam', { name: `Feed team ${sequence}`, owner_user_id: user.id });
  const created = await call<tokenV1.CreateTokenResponse__Output>(tokens, 'CreateToken', { team_id: team.id, user_id: user.id, name: 'feed' });
  return { user, team, token: created.token!, value: created.value };
}

/** Reads the feed from `cursor` to its end. */
async function readAll(cursor: number): Promise<{ ids: number[]; cursor: number }> {
  const ids: number[] = [];
  for (;;) {
    const page = await changes(cursor);
    ids.push(...page.token_ids.map(Number));
    cursor = Number(page.cursor);
    if (!page.more) return { ids, cursor };
  }
}

describe('ListTokenChanges', () => {
  it('starts a new reader at the head, with nothing listed and a lease', async () => {
    await teamWithToken();
    const first = await changes(0);
    expect(first.token_ids).toEqual([]);
    expect(Number(first.cursor)).toBeGreaterThan(0);
    expect(first.reset).toBe(false);
    expect(first.cache_valid_ms).toBeGreaterThan(0);
    expect(first.cache_valid_ms).toBeLessThanOrEqual(1_000);
    // Nothing changed since: the cursor stays.
    expect(await changes(Number(first.cursor))).toMatchObject({ token_ids: [], cursor: first.cursor, more: false, reset: false });
  });

  it('lists a revoked token, a token whose owner left the team and a token moved to another team or user, each once, in order', async () => {
    const { cursor } = await readAll(Number((await changes(0)).cursor));
    const revoked = await teamWithToken();
    const leaving = await teamWithToken();
    const moved = await teamWithToken();
    const untouched = await teamWithToken();
    await call(tokens, 'RevokeToken', { team_id: revoked.team.id, token_id: revoked.token.id });
    // The cascade from a membership deleted, as when a user leaves the team.
    await service.pool.query('DELETE FROM memberships WHERE team_id = $1 AND user_id = $2', [leaving.team.id, leaving.user.id]);
    // No API moves a token; whatever changes its team, user or value is listed all the same.
    await call(accounts, 'AddMember', { team_id: untouched.team.id, user_id: moved.user.id, role: 'member' });
    await service.pool.query('UPDATE api_tokens SET team_id = $1 WHERE id = $2', [untouched.team.id, moved.token.id]);
    // Bookkeeping is not a change.
    await service.pool.query('UPDATE api_tokens SET last_used_at = now(), lease_until = now() WHERE id = $1', [untouched.token.id]);

    const read = await readAll(cursor);
    expect(read.ids).toEqual([revoked.token.id, leaving.token.id, moved.token.id].map(Number));
    expect((await readAll(read.cursor)).ids).toEqual([]);
  });

  it('pages through many changes', async () => {
    const { cursor } = await readAll(Number((await changes(0)).cursor));
    const { team, user } = await teamWithToken();
    // 6,000 tokens in one statement, then gone with their team: more than one page of changes.
    await service.pool.query(
      `INSERT INTO api_tokens (team_id, user_id, name, token_hash) SELECT $1, $2, 'bulk', encode(sha256(g::text::bytea), 'hex') FROM generate_series(1, 6000) g`,
      [team.id, user.id],
    );
    await service.pool.query('DELETE FROM teams WHERE id = $1', [team.id]);
    const first = await changes(cursor);
    expect(first.more).toBe(true);
    const read = await readAll(cursor);
    expect(new Set(read.ids).size).toBe(6_001);
  });

  it('tells a reader whose cursor the retention passed to forget everything', async () => {
    const { cursor } = await readAll(Number((await changes(0)).cursor));
    const revoked = await teamWithToken();
    await service.pool.query('DELETE FROM api_tokens WHERE id = $1', [revoked.token.id]);
    await service.pool.query(`UPDATE api_token_changes SET changed_at = now() - interval '2 hours'`);
    expect(await pruneTokenChanges(service.pool, 3_600)).toBeGreaterThan(0);
    const answer = await changes(cursor);
    expect(answer.reset).toBe(true);
    expect(answer.token_ids).toEqual([]);
    expect(Number(answer.cursor)).toBeGreaterThan(cursor);
    expect((await changes(Number(answer.cursor))).reset).toBe(false);
  });

  it('tells a reader whose cursor is ahead of the feed (a database restored or recreated) to forget everything', async () => {
    const head = Number((await changes(0)).cursor);
    const answer = await changes(head + 1_000);
    expect(answer.reset).toBe(true);
    expect(Number(answer.cursor)).toBe(head);
  });

  it('records the last use of the tokens reported as used from a cache', async () => {
    const { token } = await teamWithToken();
    await changes(0, [Number(token.id)]);
    // Recorded in the background: wait for the row, not for a time.
    for (let attempt = 0; ; attempt++) {
      const { rows } = await service.pool.query('SELECT last_used_at FROM api_tokens WHERE id = $1', [token.id]);
      if (rows[0].last_used_at !== null) break;
      if (attempt > 100) throw new Error('last use never recorded');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('writes nothing on a lookup whose caller reports the use itself, and records the use it reports', async () => {
    const { token, value } = await teamWithToken();
    const lastUsed = async () => (await service.pool.query('SELECT last_used_at FROM api_tokens WHERE id = $1', [token.id])).rows[0].last_used_at;
    const identity = await call<tokenV1.Identity__Output>(gateway, 'Authenticate', { token: value, cache_ttl_ms: 0, caller_reports_use: true });
    expect(identity.token_id).toBe(token.id);
    // A lookup that records the use queues its write before it answers; this one queued none.
    await changes(0, []);
    expect(await lastUsed()).toBeNull();
    await changes(0, [Number(token.id)]);
    for (let attempt = 0; (await lastUsed()) === null; attempt++) {
      if (attempt > 100) throw new Error('last use never recorded');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('renews the cached acceptances that still hold, read before the changes of the same answer', async () => {
    const head = Number((await changes(0)).cursor);
    const kept = await teamWithToken();
    const revoked = await teamWithToken();
    const other = await teamWithToken();
    const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
    await call(tokens, 'RevokeToken', { team_id: revoked.team.id, token_id: revoked.token.id });
    const answer = await call<tokenV1.ListTokenChangesResponse__Output>(gateway, 'ListTokenChanges', {
      cursor: head,
      used_token_ids: [],
      renew: [
        { token_id: kept.token.id, token_sha256: sha256(kept.value) },
        { token_id: revoked.token.id, token_sha256: sha256(revoked.value) },
        // Another token's id with this value: no match.
        { token_id: other.token.id, token_sha256: sha256(kept.value) },
      ],
    });
    expect(answer.renew_answered).toBe(true);
    expect(answer.renewed).toEqual([{ token_id: Number(kept.token.id), team_id: Number(kept.team.id), user_id: Number(kept.user.id), cache_ttl_ms: 0 }]);
    expect(answer.token_ids.map(Number)).toContain(Number(revoked.token.id));
    // Nothing asked, nothing read.
    expect((await changes(Number(answer.cursor))).renewed).toEqual([]);
  });

  it('refuses bad cursors and other callers', async () => {
    await expect(changes(-1)).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(call(gateway, 'ListTokenChanges', { cursor: 0, used_token_ids: [], renew: [{ token_id: 1, token_sha256: 'not a digest' }] })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
    await expect(call(tokens, 'ListTokenChanges', { cursor: 0, used_token_ids: [] })).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
  });
});

describe('RevokeToken with the feed followed', () => {
  it('returns only once the lease of every feed answer that could have missed the revocation has run out by the database clock', async () => {
    const { team, token } = await teamWithToken();
    await changes(0); // a gateway follows the feed: the lease is outstanding
    const { rows } = await service.pool.query<{ lease_until: string; outstanding: boolean }>(`SELECT lease_until::text, lease_until > now() AS outstanding FROM api_token_feed`);
    expect(rows[0]!.outstanding).toBe(true);
    await call(tokens, 'RevokeToken', { team_id: team.id, token_id: token.id });
    const after = await service.pool.query<{ over: boolean }>(`SELECT now() >= $1::timestamptz AS over`, [rows[0]!.lease_until]);
    expect(after.rows[0]!.over).toBe(true);
  });
});
