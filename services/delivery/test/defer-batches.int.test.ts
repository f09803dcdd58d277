// Deferring the deliveries of circuit-broken endpoints on a real PostgreSQL: one statement moves a
// bounded batch, each endpoint's soonest due first, and leaves deliveries in flight alone, so an
// endpoint with a large backlog is deferred over several short statements instead of one long one.
import type { Pool } from '@worklane/db';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { DeliveryStore } from '../src/data/deliveries';
import { issueFanOuts } from './support/issue-events';

jest.setTimeout(60_000);

let database: ServiceDatabase;
let pool: Pool;
let store: DeliveryStore;

beforeAll(async () => {
  database = await createServiceDatabase('delivery');
  pool = database.pool('defer-batches');
  store = new DeliveryStore(pool, { orderWaitMs: 60_000 });
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

const TEAM = 810;
let nextIssue = 1;

/** `count` events of distinct issues, each to `webhookIds`, due at once, one second apart from 10 minutes ago. */
async function backlog(webhookIds: number[], count: number): Promise<void> {
  await store.createForEvents(issueFanOuts(TEAM, webhookIds, count, nextIssue));
  nextIssue += count;
  // Distinct due times, so "soonest first" can be checked.
  await pool.query(
    `UPDATE deliveries SET next_attempt_at = now() - interval '10 minutes' + make_interval(secs => issue_id) WHERE webhook_id = ANY($1::bigint[]) AND status = 'pending'`,
    [webhookIds],
  );
}

/** Due times (epoch ms) of a webhook's pending deliveries, soonest first, by issue. */
async function dueTimes(webhookId: number): Promise<{ issueId: number; dueMs: number; leased: boolean }[]> {
  const { rows } = await pool.query<{ issue_id: string; due_ms: number; leased: boolean }>(
    `SELECT issue_id, extract(epoch FROM next_attempt_at)::float8 * 1000 AS due_ms, lease_token IS NOT NULL AS leased
     FROM deliveries WHERE webhook_id = $1 AND status = 'pending' ORDER BY issue_id`,
    [webhookId],
  );
  return rows.map((row) => ({ issueId: Number(row.issue_id), dueMs: row.due_ms, leased: row.leased }));
}

describe('deferring the deliveries of an open endpoint', () => {
  it('moves a bounded batch per statement, soonest due first, until none is left, and leaves other endpoints alone', async () => {
    const [broken, healthy] = [8_101, 8_102];
    await backlog([broken, healthy], 130);
    const untilMs = Date.now() + 60_000;

    const first = await store.deferUntil([{ webhookId: broken, untilMs }], 50);
    expect(first).toBe(50);
    const afterFirst = await dueTimes(broken);
    const moved = afterFirst.filter((row) => row.dueMs >= untilMs - 1);
    // The 50 that were due soonest went first.
    expect(moved.map((row) => row.issueId)).toEqual(afterFirst.slice(0, 50).map((row) => row.issueId));

    const batches = [first];
    while (batches.at(-1) === 50) batches.push(await store.deferUntil([{ webhookId: broken, untilMs }], 50));
    expect(batches).toEqual([50, 50, 30]);
    expect((await dueTimes(broken)).every((row) => Math.abs(row.dueMs - untilMs) < 1)).toBe(true);
    // Nothing more to move: the next statement says so.
    expect(await store.deferUntil([{ webhookId: broken, untilMs }], 50)).toBe(0);
    expect((await dueTimes(healthy)).every((row) => row.dueMs < Date.now())).toBe(true);
  });

  it('shares one bounded statement between several endpoints and skips a delivery being attempted', async () => {
    const [a, b] = [8_201, 8_202];
    await backlog([a, b], 40);
    // One delivery of `a` is being attempted right now: leased, due again only if its lease runs out.
    await pool.query(
      `UPDATE deliveries SET lease_token = gen_random_uuid(), next_attempt_at = now() + interval '1 minute'
       WHERE id = (SELECT id FROM deliveries WHERE webhook_id = $1 AND status = 'pending' ORDER BY next_attempt_at LIMIT 1)`,
      [a],
    );
    const untilMs = Date.now() + 120_000;
    const endpoints = [
      { webhookId: a, untilMs },
      { webhookId: b, untilMs },
    ];

    const batches: number[] = [];
    do batches.push(await store.deferUntil(endpoints, 30));
    while (batches.at(-1) === 30);
    expect(batches.reduce((sum, count) => sum + count, 0)).toBe(79);
    expect(batches.every((count) => count <= 30)).toBe(true);

    const rowsOfA = await dueTimes(a);
    expect(rowsOfA.filter((row) => row.leased).every((row) => row.dueMs < untilMs - 1000)).toBe(true);
    expect(rowsOfA.filter((row) => !row.leased).every((row) => Math.abs(row.dueMs - untilMs) < 1)).toBe(true);
    expect((await dueTimes(b)).every((row) => Math.abs(row.dueMs - untilMs) < 1)).toBe(true);
  });
});
