// A backlog on a real PostgreSQL: the per-issue order check, which runs for every delivery a claim,
// a fan-out or a recorded attempt touches, must stay an index probe whatever the table's
// statistics say.
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
  pool = database.pool('order-check-index');
  store = new DeliveryStore(pool, { orderWaitMs: 60_000 });
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

let nextTeam = 700;
let nextWebhook = 7_000;
let nextIssue = 1;

/** `count` events of distinct issues of `teamId`, each to `webhookIds`, due now. */
async function backlog(teamId: number, webhookIds: number[], count: number): Promise<void> {
  await store.createForEvents(issueFanOuts(teamId, webhookIds, count, nextIssue));
  nextIssue += count;
}

/** Every delivery so far finished, so the next test starts from nothing due. */
const finishAll = () => pool.query(`UPDATE deliveries SET status = 'succeeded', lease_token = NULL, next_attempt_at = NULL, completed_at = now() WHERE status = 'pending'`);

/** The indexes a plan reads, for every node of it. */
function indexesOf(plan: Record<string, unknown>): string[] {
  const own = typeof plan['Index Name'] === 'string' ? [plan['Index Name']] : [];
  const children = (plan.Plans as Record<string, unknown>[] | undefined) ?? [];
  return [...own, ...children.flatMap(indexesOf)];
}

describe('the per-issue order check', () => {
  it('reads only the per-issue index, even with statistics taken while nothing was pending', async () => {
    const team = nextTeam++;
    const webhookId = nextWebhook++;
    // A quiet period: every delivery finished, and the statistics say so.
    await backlog(team, [webhookId], 400);
    await finishAll();
    await pool.query('VACUUM ANALYZE deliveries');
    // Then a burst, which the statistics do not know of.
    await backlog(team, [webhookId], 400);

    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // Whatever the table's size, the question is which index answers, not whether to use one.
      await client.query('SET LOCAL enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(
        `EXPLAIN (FORMAT JSON) SELECT 1 FROM deliveries AS e
         WHERE e.webhook_id = $1 AND e.issue_id = $2 AND e.status = 'pending' AND e.stream_seq < $3`,
        [webhookId, nextIssue - 100, nextIssue - 100],
      );
      expect(indexesOf(rows[0]!['QUERY PLAN'][0].Plan)).toEqual(['deliveries_pending_by_issue']);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    await finishAll();
  });
});
