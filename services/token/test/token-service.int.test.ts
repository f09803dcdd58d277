// The token service's gRPC API in-process against a real PostgreSQL database, called the way the
// gateway, the console and the CLI call it (signed internal calls).
import { createHash } from 'node:crypto';
import type { Pool } from '@worklane/db';
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { createLogger, createMetrics } from '@worklane/observability';
import { loadProto, type TokenProto, type tokenV1 } from '@worklane/proto';
import { createServiceDatabase, publicKeysOf, signerOf, signingKeyPairs, type ServiceDatabase } from '@worklane/testing';
import { createApp, type TokenApp } from '../src/app';
import { TRUSTED_PRINCIPALS } from '../src/config';

jest.setTimeout(60_000);

let database: ServiceDatabase;
let pool: Pool;
let app: TokenApp;
let tokens: tokenV1.TokenServiceClient;
let gatewayTokens: tokenV1.TokenServiceClient;
let accounts: tokenV1.AccountServiceClient;
let address: string;
const keys = signingKeyPairs();
const lifetime = { idleSeconds: 3600, absoluteSeconds: 86_400 };

beforeAll(async () => {
  database = await createServiceDatabase('token');
  pool = database.pool('token-test', { max: 5 });
  app = createApp({
    pool,
    logger: createLogger('token', 'silent'),
    metrics: createMetrics('token'),
    publicKeys: publicKeysOf(keys, TRUSTED_PRINCIPALS),
    sessionLifetime: lifetime,
    isReady: () => true,
  });
  address = `127.0.0.1:${await app.grpc.listen('127.0.0.1', 0)}`;
  const { v1 } = loadProto<TokenProto>('token').worklane.token;
  // The console manages tokens and accounts; only the gateway authenticates.
  const console = signerOf(keys, 'console');
  tokens = createGrpcClient(v1.TokenService, address, { caller: 'console', signingKey: console.key });
  accounts = createGrpcClient(v1.AccountService, address, { caller: 'console', signingKey: console.key });
  gatewayTokens = createGrpcClient(v1.TokenService, address, { caller: 'gateway', signingKey: signerOf(keys, 'gateway').key });
});

afterAll(async () => {
  tokens?.close();
  gatewayTokens?.close();
  accounts?.close();
  await app?.grpc.shutdown();
  await database?.drop();
});

type Client = Record<string, (...args: any[]) => unknown>;
const call = <Response>(client: unknown, method: string, request: object) =>
  unaryCall<Response>((metadata, options, done) => (client as Client)[method]!(request, metadata, options, done));

async function failure(promise: Promise<unknown>): Promise<{ code: string; details: string }> {
  try {
    await promise;
  } catch (error) {
    const rpc = error as grpc.ServiceError;
    return { code: grpc.status[rpc.code]!, details: rpc.details };
  }
  throw new Error('expected the call to fail');
}

let sequence = 0;
async function member(role: 'owner' | 'member' = 'owner') {
  sequence++;
  const user = await call<tokenV1.User__Output>(accounts, 'CreateUser', { email: `user${sequence}-${Date.now()}@example.test`, password: 'correct horse', name: '' });
  const team = await call<tokenV1.Team__Output>(accounts, 'CreateTeam', { name: `Team ${sequence}`, owner_user_id: user.id });
  if (role === 'member') {
    const other = await call<tokenV1.User__Output>(accounts, 'CreateUser', { email: `member${sequence}-${Date.now()}@example.test`, password: 'correct horse', name: '' });
    await call(accounts, 'AddMember', { team_id: team.id, user_id: other.id, role: 'member' });
    return { user: other, team };
  }
  return { user, team };
}

const createToken = (teamId: number, userId: number, name = 'ci') => call<tokenV1.CreateTokenResponse__Output>(tokens, 'CreateToken', { team_id: teamId, user_id: userId, name });
const authenticate = (token: string) => call<tokenV1.Identity__Output>(gatewayTokens, 'Authenticate', { token });

describe('TokenService', () => {
  it('creates a token whose value is shown once and authenticates to its team, user and id', async () => {
    const { user, team } = await member();
    const created = await createToken(team.id, user.id, '  deploy bot  ');
    expect(created.value).toMatch(/^wl_[0-9A-Za-z]{36}$/);
    expect(created.token).toMatchObject({ team_id: team.id, user_id: user.id, name: 'deploy bot', last_used_at: '' });
    expect(created.token!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(await authenticate(created.value)).toEqual({ token_id: created.token!.id, team_id: team.id, user_id: user.id, cache_ttl_ms: 0 });
  });

  it('stores only the SHA-256 of the value', async () => {
    const { user, team } = await member();
    const created = await createToken(team.id, user.id);
    const { rows } = await pool.query('SELECT * FROM api_tokens WHERE id = $1', [created.token!.id]);
    expect(rows[0].token_hash).toBe(createHash('sha256').update(created.value).digest('hex'));
    expect(JSON.stringify(rows[0])).not.toContain(created.value.slice(3));
  });

  it('refuses malformed, unknown and revoked tokens with UNAUTHENTICATED', async () => {
    const { user, team } = await member();
    const created = await createToken(team.id, user.id);
    const flipped = created.value.slice(0, 5) + (created.value[5] === 'x' ? 'y' : 'x') + created.value.slice(6);
    for (const value of ['', 'wl_', 'not a token', flipped, `${created.value}0`, 'x'.repeat(10_000)]) {
      expect(await failure(authenticate(value))).toEqual({ code: 'UNAUTHENTICATED', details: 'invalid token' });
    }
    await call(tokens, 'RevokeToken', { team_id: team.id, token_id: created.token!.id });
    expect(await failure(authenticate(created.value))).toEqual({ code: 'UNAUTHENTICATED', details: 'invalid token' });
  });

  it('revokes only within the token’s team', async () => {
    const a = await member();
    const b = await member();
    const created = await createToken(a.team.id, a.user.id);
    expect(await failure(call(tokens, 'RevokeToken', { team_id: b.team.id, token_id: created.token!.id }))).toEqual({
      code: 'NOT_FOUND',
      details: `token ${created.token!.id} not found in team ${b.team.id}`,
    });
    expect((await authenticate(created.value)).token_id).toBe(created.token!.id);
    expect((await failure(call(tokens, 'RevokeToken', { team_id: a.team.id, token_id: 0 }))).code).toBe('INVALID_ARGUMENT');
  });

  it('grants the lease asked for, capped at TOKEN_CACHE_MAX_TTL_MS, and records it on the token', async () => {
    const { user, team } = await member();
    const created = await createToken(team.id, user.id);
    const lease = async () =>
      (await pool.query<{ ms: number | null }>(`SELECT extract(epoch from lease_until - now()) * 1000 AS ms FROM api_tokens WHERE id = $1`, [created.token!.id])).rows[0]!.ms;
    expect((await authenticate(created.value)).cache_ttl_ms).toBe(0);
    expect(await lease()).toBeNull();
    const leased = await call<tokenV1.Identity__Output>(gatewayTokens, 'Authenticate', { token: created.value, cache_ttl_ms: 60_000 });
    expect(leased).toEqual({ token_id: created.token!.id, team_id: team.id, user_id: user.id, cache_ttl_ms: 1_000 });
    const remaining = Number(await lease());
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(1_000);
    // A shorter lease asked later does not shorten the one outstanding.
    expect((await call<tokenV1.Identity__Output>(gatewayTokens, 'Authenticate', { token: created.value, cache_ttl_ms: 1 })).cache_ttl_ms).toBe(1);
    expect(Number(await lease())).toBeGreaterThan(1);
    // A leased authentication records the use, as an unleased one does.
    const { rows } = await pool.query('SELECT last_used_at FROM api_tokens WHERE id = $1', [created.token!.id]);
    expect(rows[0].last_used_at).not.toBeNull();
  });

  it('answers RevokeToken only once every lease granted on the token has run out by the database clock', async () => {
    const { user, team } = await member();
    const created = await createToken(team.id, user.id);
    const leased = await call<tokenV1.Identity__Output>(gatewayTokens, 'Authenticate', { token: created.value, cache_ttl_ms: 1_000 });
    expect(leased.cache_ttl_ms).toBe(1_000);
    const { rows } = await pool.query<{ lease_until: string; outstanding: boolean }>(`SELECT lease_until::text, lease_until > now() AS outstanding FROM api_tokens WHERE id = $1`, [
      created.token!.id,
    ]);
    expect(rows[0]!.outstanding).toBe(true);

    await call(tokens, 'RevokeToken', { team_id: team.id, token_id: created.token!.id });

    // Ordering, not timing: when the revoke returns, the lease it had to respect is over.
    const after = await pool.query<{ over: boolean }>(`SELECT now() >= $1::timestamptz AS over`, [rows[0]!.lease_until]);
    expect(after.rows[0]!.over).toBe(true);
    expect(await failure(call(gatewayTokens, 'Authenticate', { token: created.value, cache_ttl_ms: 1_000 }))).toEqual({ code: 'UNAUTHENTICATED', details: 'invalid token' });
  });

  it('stops authenticating the tokens of a user who leaves the team', async () => {
    const { user, team } = await member('member');
    const created = await createToken(team.id, user.id);
    await pool.query('DELETE FROM memberships WHERE team_id = $1 AND user_id = $2', [team.id, user.id]);
    expect((await failure(authenticate(created.value))).code).toBe('UNAUTHENTICATED');
  });

  it('records last_used_at on use, at most once a minute', async () => {
    const { user, team } = await member();
    const created = await createToken(team.id, user.id);
    const lastUsed = async () => (await pool.query('SELECT last_used_at FROM api_tokens WHERE id = $1', [created.token!.id])).rows[0].last_used_at as Date | null;
    expect(await lastUsed()).toBeNull();
    await authenticate(created.value);
    // Written after the answer, so poll for it (bounded).
    for (let attempt = 0; attempt < 100 && (await lastUsed()) === null; attempt++) await new Promise((resolve) => setTimeout(resolve, 20));
    const first = await lastUsed();
    expect(first).not.toBeNull();
    await authenticate(created.value);
    await authenticate(created.value);
    await pool.query('SELECT pg_sleep(0.05)');
    expect(await lastUsed()).toEqual(first);

    // Over a minute later, the next use is recorded again.
    await pool.query("UPDATE api_tokens SET last_used_at = now() - interval '2 minutes' WHERE id = $1", [created.token!.id]);
    const aged = await lastUsed();
    await authenticate(created.value);
    for (let attempt = 0; attempt < 100 && (await lastUsed())!.getTime() === aged!.getTime(); attempt++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await lastUsed())!.getTime()).toBeGreaterThan(aged!.getTime());
    const listed = await call<tokenV1.ListTokensResponse__Output>(tokens, 'ListTokens', { team_id: team.id });
    expect(listed.tokens[0]!.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('validates token creation with clear messages', async () => {
    const { user, team } = await member();
    const outsider = await member();
    expect(await failure(createToken(team.id, user.id, '   '))).toEqual({ code: 'INVALID_ARGUMENT', details: 'name must not be empty' });
    expect(await failure(createToken(team.id, user.id, 'x'.repeat(256)))).toEqual({ code: 'INVALID_ARGUMENT', details: 'name must be 1 to 255 characters' });
    expect(await failure(createToken(0, user.id))).toEqual({ code: 'INVALID_ARGUMENT', details: 'team_id must be a positive integer' });
    expect(await failure(createToken(987654, user.id))).toEqual({ code: 'NOT_FOUND', details: 'team 987654 not found' });
    expect(await failure(createToken(team.id, 987654))).toEqual({ code: 'NOT_FOUND', details: 'user 987654 not found' });
    expect(await failure(createToken(team.id, outsider.user.id))).toEqual({
      code: 'FAILED_PRECONDITION',
      details: `user ${outsider.user.id} is not a member of team ${team.id}`,
    });
  });

  it("lists a team's tokens newest first, without values", async () => {
    const { user, team } = await member();
    const first = await createToken(team.id, user.id, 'first');
    const second = await createToken(team.id, user.id, 'second');
    const listed = await call<tokenV1.ListTokensResponse__Output>(tokens, 'ListTokens', { team_id: team.id });
    expect(listed.tokens.map((token) => token.id)).toEqual([second.token!.id, first.token!.id]);
    expect(JSON.stringify(listed)).not.toContain('wl_');
    expect((await failure(call(tokens, 'ListTokens', { team_id: 987654 }))).code).toBe('NOT_FOUND');
  });

  it('refuses calls that are not signed by a principal it holds the public key of', async () => {
    const { v1 } = loadProto<TokenProto>('token').worklane.token;
    const stranger = createGrpcClient(v1.TokenService, address, { caller: 'stranger', signingKey: signerOf(signingKeyPairs(), 'gateway').key });
    try {
      expect(await failure(call(stranger, 'Authenticate', { token: 'wl_x' }))).toEqual({ code: 'UNAUTHENTICATED', details: 'caller is not signed' });
    } finally {
      stranger.close();
    }
  });

  it("accepts each method only from its callers: the issue service's key cannot authenticate tokens, nor pass as the gateway", async () => {
    const { v1 } = loadProto<TokenProto>('token').worklane.token;
    const issueKey = signerOf(keys, 'issue').key;
    const asIssue = createGrpcClient(v1.TokenService, address, { caller: 'issue', signingKey: issueKey });
    const posingAsGateway = createGrpcClient(v1.TokenService, address, { caller: 'gateway', signingKey: issueKey });
    const issueAccounts = createGrpcClient(v1.AccountService, address, { caller: 'issue', signingKey: issueKey });
    try {
      expect(await failure(call(asIssue, 'Authenticate', { token: 'wl_x' }))).toEqual({
        code: 'PERMISSION_DENIED',
        details: 'issue may not call /worklane.token.v1.TokenService/Authenticate',
      });
      expect((await failure(call(asIssue, 'CreateToken', { team_id: 1, user_id: 1, name: 'x' }))).code).toBe('PERMISSION_DENIED');
      expect((await failure(call(issueAccounts, 'VerifyPassword', { email: 'a@example.test', password: 'x' }))).code).toBe('PERMISSION_DENIED');
      expect(await failure(call(posingAsGateway, 'Authenticate', { token: 'wl_x' }))).toEqual({ code: 'UNAUTHENTICATED', details: 'caller is not signed' });
      // What the issue service is there for: memberships.
      const { user } = await member();
      expect((await call<tokenV1.ListTeamsForUserResponse__Output>(issueAccounts, 'ListTeamsForUser', { user_id: user.id })).memberships.length).toBe(1);
    } finally {
      asIssue.close();
      posingAsGateway.close();
      issueAccounts.close();
    }
  });
});

describe('AccountService', () => {
  it('counts sign-in attempts atomically: of 30 concurrent wrong passwords exactly the limit get a verdict', async () => {
    const email = `throttled-${Date.now()}@example.test`;
    await call(accounts, 'CreateUser', { email, password: 'right password', name: '' });
    const throttle = { client_address: '198.51.100.7', window_seconds: 600, max_per_account: 5, max_per_address: 100 };
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) => failure(call(accounts, 'VerifyPassword', { email: i % 2 ? email : email.toUpperCase(), password: `wrong ${i}`, throttle }))),
    );
    expect(outcomes.filter((o) => o.code === 'UNAUTHENTICATED')).toHaveLength(5);
    const refused = outcomes.filter((o) => o.code === 'RESOURCE_EXHAUSTED');
    expect(refused).toHaveLength(25);
    for (const o of refused) expect(o.details).toMatch(/^retry after \d+ s$/);
    // Refused attempts were not counted against the address: 5 failures, 95 left.
    const { rows } = await pool.query(`SELECT bucket, attempts FROM sign_in_attempts WHERE bucket IN ($1, $2) ORDER BY bucket`, [`account:${email}`, 'address:198.51.100.7']);
    expect(rows).toEqual([
      { bucket: `account:${email}`, attempts: 5 },
      { bucket: 'address:198.51.100.7', attempts: 5 },
    ]);
    // The right password is refused too while the account is at its limit.
    expect((await failure(call(accounts, 'VerifyPassword', { email, password: 'right password', throttle }))).code).toBe('RESOURCE_EXHAUSTED');
    // Without a throttle (the CLI) nothing is counted.
    expect((await call<tokenV1.User__Output>(accounts, 'VerifyPassword', { email, password: 'right password' })).email).toBe(email);
  });

  it('refuses an over-long client address or window', async () => {
    const base = { email: 'a@example.test', password: 'x' };
    const bad = [
      { client_address: 'x'.repeat(65), window_seconds: 60, max_per_account: 1, max_per_address: 1 },
      { client_address: '10.0.0.1', window_seconds: 86_401, max_per_account: 1, max_per_address: 1 },
    ];
    for (const throttle of bad) expect((await failure(call(accounts, 'VerifyPassword', { ...base, throttle }))).code).toBe('INVALID_ARGUMENT');
  });

  it('keeps one account per email whatever its case, with a scrypt hash of the password', async () => {
    const email = `Case-${Date.now()}@Example.TEST`;
    const user = await call<tokenV1.User__Output>(accounts, 'CreateUser', { email, password: 'long enough', name: 'Ada' });
    expect(user).toMatchObject({ email, name: 'Ada' });
    expect(await failure(call(accounts, 'CreateUser', { email: email.toLowerCase(), password: 'long enough', name: '' }))).toEqual({
      code: 'ALREADY_EXISTS',
      details: 'a user with this email already exists',
    });
    expect((await call<tokenV1.User__Output>(accounts, 'GetUserByEmail', { email: email.toUpperCase() })).id).toBe(user.id);
    const { rows } = await pool.query('SELECT password_hash FROM users WHERE id = $1', [user.id]);
    expect(rows[0].password_hash).toMatch(/^scrypt\$16384\$8\$5\$/);
  });

  it('validates new users', async () => {
    const create = (request: object) => failure(call(accounts, 'CreateUser', { email: 'ok@example.test', password: 'long enough', name: '', ...request }));
    expect(await create({ email: 'not-an-email' })).toEqual({ code: 'INVALID_ARGUMENT', details: 'email must be a valid email address' });
    expect(await create({ email: '' })).toEqual({ code: 'INVALID_ARGUMENT', details: 'email must not be empty' });
    expect(await create({ password: 'short' })).toEqual({ code: 'INVALID_ARGUMENT', details: 'password must be at least 8 characters' });
    expect(await create({ name: 'x'.repeat(256) })).toEqual({ code: 'INVALID_ARGUMENT', details: 'name must be 1 to 255 characters' });
    expect((await failure(call(accounts, 'GetUserByEmail', { email: 'nobody@example.test' }))).code).toBe('NOT_FOUND');
  });

  it('verifies passwords without saying whether the email exists', async () => {
    const email = `verify-${Date.now()}@example.test`;
    const user = await call<tokenV1.User__Output>(accounts, 'CreateUser', { email, password: 'right password', name: '' });
    expect((await call<tokenV1.User__Output>(accounts, 'VerifyPassword', { email, password: 'right password' })).id).toBe(user.id);
    const wrong = await failure(call(accounts, 'VerifyPassword', { email, password: 'wrong password' }));
    const unknown = await failure(call(accounts, 'VerifyPassword', { email: `nobody-${email}`, password: 'right password' }));
    expect(wrong).toEqual({ code: 'UNAUTHENTICATED', details: 'invalid email or password' });
    expect(unknown).toEqual(wrong);
  });

  it('creates teams with their owner and adds members once', async () => {
    const { user, team } = await member();
    const other = await call<tokenV1.User__Output>(accounts, 'CreateUser', { email: `other-${Date.now()}@example.test`, password: 'long enough', name: '' });
    expect(await call(accounts, 'AddMember', { team_id: team.id, user_id: other.id, role: '' })).toEqual({
      team_id: team.id,
      user_id: other.id,
      role: 'member',
      team_name: team.name,
    });
    expect((await failure(call(accounts, 'AddMember', { team_id: team.id, user_id: other.id, role: 'owner' }))).code).toBe('ALREADY_EXISTS');
    expect(await failure(call(accounts, 'AddMember', { team_id: team.id, user_id: other.id, role: 'admin' }))).toEqual({
      code: 'INVALID_ARGUMENT',
      details: 'role must be owner or member',
    });
    const memberships = await call<tokenV1.ListTeamsForUserResponse__Output>(accounts, 'ListTeamsForUser', { user_id: user.id });
    expect(memberships.memberships).toEqual([{ team_id: team.id, user_id: user.id, role: 'owner', team_name: team.name }]);
    expect((await failure(call(accounts, 'CreateTeam', { name: 'x', owner_user_id: 987654 }))).code).toBe('NOT_FOUND');
    expect((await failure(call(accounts, 'CreateTeam', { name: '', owner_user_id: user.id }))).code).toBe('INVALID_ARGUMENT');
  });

  describe('sessions', () => {
    const session = async () => {
      const { user } = await member();
      return call<tokenV1.Session__Output>(accounts, 'CreateSession', { user_id: user.id });
    };
    const getSession = (id: string) => call<tokenV1.Session__Output>(accounts, 'GetSession', { id });

    it('returns an opaque secret, a CSRF token and the expiry; stores only the secret’s hash', async () => {
      const created = await session();
      expect(created.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(created.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(created.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(await getSession(created.id)).toEqual(created);
      const { rows } = await pool.query('SELECT secret_hash FROM sessions WHERE user_id = $1', [created.user_id]);
      expect(rows[0].secret_hash).toBe(createHash('sha256').update(created.id).digest('hex'));
    });

    it('ends at sign-out, after the idle timeout and after the absolute timeout', async () => {
      const signedOut = await session();
      await call(accounts, 'DeleteSession', { id: signedOut.id });
      expect((await failure(getSession(signedOut.id))).code).toBe('NOT_FOUND');

      const idle = await session();
      await pool.query("UPDATE sessions SET last_seen_at = now() - interval '2 hours' WHERE user_id = $1", [idle.user_id]);
      expect(await failure(getSession(idle.id))).toEqual({ code: 'NOT_FOUND', details: 'session not found or expired' });

      const old = await session();
      await pool.query("UPDATE sessions SET absolute_expires_at = now() - interval '1 second' WHERE user_id = $1", [old.user_id]);
      expect((await failure(getSession(old.id))).code).toBe('NOT_FOUND');

      expect((await failure(getSession('made-up'))).code).toBe('NOT_FOUND');
    });

    it('restarts the idle timer when used, within the absolute limit', async () => {
      const created = await session();
      await pool.query("UPDATE sessions SET last_seen_at = now() - interval '30 minutes' WHERE user_id = $1", [created.user_id]);
      const before = (await pool.query('SELECT last_seen_at FROM sessions WHERE user_id = $1', [created.user_id])).rows[0].last_seen_at as Date;
      const used = await getSession(created.id);
      const after = (await pool.query('SELECT last_seen_at FROM sessions WHERE user_id = $1', [created.user_id])).rows[0].last_seen_at as Date;
      expect(after.getTime()).toBeGreaterThan(before.getTime());
      expect(used.expires_at >= created.expires_at).toBe(true);
    });
  });
});
