// SyncRateLimits, the gateway replicas' shared API rate limits, in-process against a real
// PostgreSQL database: spending of several replicas adds up in one bucket per key, buckets refill
// by the time elapsed, debts stop at one burst, refilled buckets are swept, only the gateway calls.
import type { Pool } from '@worklane/db';
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { loadProto, type TokenProto, type tokenV1 } from '@worklane/proto';
import { signerOf } from '@worklane/testing';
import { deleteFullBuckets } from '../src/data/rate-limit-buckets';
import { startInProcessTokenService, type InProcessTokenService } from './support/in-process';

jest.setTimeout(60_000);

let service: InProcessTokenService;
let pool: Pool;
let gateway: tokenV1.TokenServiceClient;
let console: tokenV1.TokenServiceClient;

beforeAll(async () => {
  service = await startInProcessTokenService('token-rate-limit-test', { poolMax: 5 });
  pool = service.pool;
  const { v1 } = loadProto<TokenProto>('token').worklane.token;
  gateway = createGrpcClient(v1.TokenService, service.address, { caller: 'gateway', signingKey: signerOf(service.keys, 'gateway').key });
  console = createGrpcClient(v1.TokenService, service.address, { caller: 'console', signingKey: signerOf(service.keys, 'console').key });
});

afterAll(async () => {
  gateway?.close();
  console?.close();
  await service?.stop();
});

type Usage = tokenV1.RateLimitUsage;
const sync = (usage: Usage[], client = gateway) =>
  unaryCall<tokenV1.SyncRateLimitsResponse__Output>((metadata, options, done) => client.SyncRateLimits({ usage }, metadata, options, done));

/** A key that no other test touches. */
let nextId = 1_000;
const freshId = () => (nextId += 1);

/** Nearly no refill: levels are exact to well under one unit within a test. */
const team = (id: number, spent: number, burst = 10): Usage => ({ scope: 'RATE_LIMIT_SCOPE_TEAM', id, spent, per_second: 0.0001, burst });
const token = (id: number, spent: number, burst = 10): Usage => ({ scope: 'RATE_LIMIT_SCOPE_TOKEN', id, spent, per_second: 0.0001, burst });

async function failure(promise: Promise<unknown>): Promise<{ code: string; details: string }> {
  try {
    await promise;
  } catch (error) {
    const rpc = error as grpc.ServiceError;
    return { code: grpc.status[rpc.code]!, details: rpc.details };
  }
  throw new Error('expected the call to fail');
}

/** Moves a bucket's last sync `seconds` into the past, as if that much time had gone by. */
const age = (id: number, seconds: number) => pool.query(`UPDATE rate_limit_buckets SET updated_at = updated_at - make_interval(secs => $2) WHERE key = $1`, [id, seconds]);

describe('SyncRateLimits', () => {
  it('starts a key full, adds up what every replica spent, and answers each key its level', async () => {
    const [teamId, tokenId] = [freshId(), freshId()];
    const first = await sync([team(teamId, 3), token(tokenId, 1)]);
    expect(first.levels).toHaveLength(2);
    const byScope = Object.fromEntries(first.levels.map((level) => [level.scope, level]));
    expect(byScope.RATE_LIMIT_SCOPE_TEAM).toMatchObject({ id: teamId });
    expect(byScope.RATE_LIMIT_SCOPE_TEAM!.level).toBeCloseTo(7, 2);
    expect(byScope.RATE_LIMIT_SCOPE_TOKEN).toMatchObject({ id: tokenId });
    expect(byScope.RATE_LIMIT_SCOPE_TOKEN!.level).toBeCloseTo(9, 2);
    // Another replica spent 4 of the same team; a third only asks.
    expect((await sync([team(teamId, 4)])).levels[0]!.level).toBeCloseTo(3, 2);
    expect((await sync([team(teamId, 0)])).levels[0]!.level).toBeCloseTo(3, 2);
  });

  it('keeps scopes apart: a token and a team with the same id are two buckets', async () => {
    const id = freshId();
    await sync([team(id, 5)]);
    expect((await sync([token(id, 0)])).levels[0]!.level).toBeCloseTo(10, 2);
  });

  it('refills by the time elapsed since the last sync, at the rate sent, up to the burst', async () => {
    const id = freshId();
    const perSecond = (spent: number): Usage => ({ scope: 'RATE_LIMIT_SCOPE_TEAM', id, spent, per_second: 2, burst: 10 });
    expect((await sync([perSecond(10)])).levels[0]!.level).toBeLessThan(0.5);
    await age(id, 3);
    const refilled = (await sync([perSecond(0)])).levels[0]!.level;
    expect(refilled).toBeGreaterThanOrEqual(6);
    expect(refilled).toBeLessThan(7);
    await age(id, 3600);
    expect((await sync([perSecond(0)])).levels[0]!.level).toBe(10);
  });

  it('lets a key overspend into a debt of one burst at most', async () => {
    const id = freshId();
    expect((await sync([team(id, 1_000)])).levels[0]!.level).toBe(-10);
    expect((await sync([team(id, 1_000)])).levels[0]!.level).toBe(-10);
  });

  it('counts a key sent twice in one call once, with both spendings', async () => {
    const id = freshId();
    const { levels } = await sync([team(id, 2), team(id, 3)]);
    expect(levels).toHaveLength(1);
    expect(levels[0]!.level).toBeCloseTo(5, 2);
  });

  it('adds up concurrent syncs of the same keys without losing any spending', async () => {
    const ids = [freshId(), freshId(), freshId()];
    // Ten replicas at once, each sending the keys in another order.
    await Promise.all(Array.from({ length: 10 }, (_, n) => sync((n % 2 ? [...ids].reverse() : ids).map((id) => team(id, 1, 100)))));
    const { levels } = await sync(ids.map((id) => team(id, 0, 100)));
    for (const level of levels) expect(level.level).toBeCloseTo(90, 1);
  });

  it('is refused to every caller but the gateway', async () => {
    expect((await failure(sync([team(freshId(), 1)], console))).code).toBe('PERMISSION_DENIED');
  });

  it('refuses keys it cannot store: no scope, no id, no rate, too many', async () => {
    expect(await failure(sync([{ ...team(freshId(), 1), scope: 'RATE_LIMIT_SCOPE_UNSPECIFIED' }]))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await failure(sync([team(0, 1)]))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await failure(sync([{ ...team(freshId(), 1), per_second: 0 }]))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(await failure(sync([{ ...team(freshId(), 1), burst: 0 }]))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const tooMany = Array.from({ length: 10_001 }, (_, n) => team(n + 1, 0));
    expect(await failure(sync(tooMany))).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((await sync([])).levels).toEqual([]);
  });
});

describe('the sweep of refilled buckets', () => {
  it('deletes the buckets full again and keeps the others', async () => {
    const [full, spent] = [freshId(), freshId()];
    await sync([team(full, 1), team(spent, 5)]);
    await age(full, 100_000);
    await deleteFullBuckets(pool);
    const { rows } = await pool.query<{ key: string }>('SELECT key FROM rate_limit_buckets WHERE key = ANY($1)', [[full, spent]]);
    expect(rows.map((row) => Number(row.key))).toEqual([spent]);
    // A deleted bucket is a full one.
    expect((await sync([team(full, 0)])).levels[0]!.level).toBe(10);
  });
});
