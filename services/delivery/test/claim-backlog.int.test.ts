// The claim against a backlog, on a real PostgreSQL: what it says about the due deliveries its
// budgets left behind (the sender claims again as soon as slots free up when more is due), and
// the per-issue order check, which runs for every delivery a claim, a fan-out or a recorded
// attempt touches and must stay an index probe whatever the table's statistics say.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createPool, migrate, type Pool } from '@worklane/db';
import { createTestDatabase, type TestDatabase } from '@worklane/testing';
import { DeliveryStore, type EventFanOut } from '../src/data/deliveries';
import type { ClaimBudget } from '../src/sending/budgets';
import { openClaimBudget } from './support/claim-budget';

jest.setTimeout(60_000);

let database: TestDatabase;
let pool: Pool;
let store: DeliveryStore;

beforeAll(async () => {
  database = await createTestDatabase();
  await migrate(database.url, 'delivery', join(__dirname, '..', 'migrations'));
  pool = createPool({ url: database.url, schema: 'delivery', max: 4, applicationName: 'claim-backlog' });
  store = new DeliveryStore(pool, { orderWaitMs: 60_000 });
}, 60_000);
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

let nextTeam = 700;
let nextWebhook = 7_000;
let nextIssue = 1;

/** `count` events of distinct issues of `teamId`, each to `webhookIds`, due now. */
async function backlog(teamId: number, webhookIds: number[], count: number): Promise<void> {
  const events: EventFanOut[] = Array.from({ length: count }, () => {
    const issueId = nextIssue++;
    return {
      event: { id: randomUUID(), event: 'issue.created', created_at: '2026-11-24T10:00:00.000000Z', team_id: teamId, issue_id: issueId },
      body: Buffer.from(JSON.stringify({ issue: issueId })),
      traceContext: {},
      webhookIds,
      firstDelayMs: 0,
      streamSequence: issueId,
    };
  });
  await store.createForEvents(events);
}

/** Every delivery so far finished, so the next test starts from nothing due. */
const finishAll = () => pool.query(`UPDATE deliveries SET status = 'succeeded', lease_token = NULL, next_attempt_at = NULL, completed_at = now() WHERE status = 'pending'`);

/** Claims with `budget`, then finishes everything. */
async function claim(budget: ClaimBudget) {
  const result = await store.claimDue(budget, 30_000);
  await finishAll();
  return result;
}

describe('a claim says whether its budgets left due deliveries behind', () => {
  it('says nothing is left when it took everything due', async () => {
    const team = nextTeam++;
    const [a, b] = [nextWebhook++, nextWebhook++];
    await backlog(team, [a, b], 3);
    const result = await claim(openClaimBudget({ perWebhook: 5 }));
    expect(result.deliveries).toHaveLength(6);
    expect(result.moreDue).toBe(false);
  });

  it('says more is due when an endpoint took all it was allowed', async () => {
    const team = nextTeam++;
    const [busy, quiet] = [nextWebhook++, nextWebhook++];
    await backlog(team, [busy], 5);
    await backlog(team, [quiet], 1);
    // `busy` has one attempt in flight already: one more may start.
    const result = await claim(openClaimBudget({ perWebhook: 2, webhookAllowances: [[busy, 1]] }));
    expect(result.deliveries.map((delivery) => delivery.webhookId).sort()).toEqual([busy, quiet].sort());
    expect(result.moreDue).toBe(true);
  });

  it('says more is due when a team took all it was allowed', async () => {
    const team = nextTeam++;
    const webhookIds = [nextWebhook++, nextWebhook++, nextWebhook++];
    await backlog(team, webhookIds, 2);
    const result = await claim(openClaimBudget({ perWebhook: 5, teamAllowances: [[team, 3]] }));
    expect(result.deliveries).toHaveLength(3);
    expect(result.moreDue).toBe(true);
  });

  it('says more is due when an endpoint at its budget could take nothing', async () => {
    const team = nextTeam++;
    const webhookId = nextWebhook++;
    await backlog(team, [webhookId], 2);
    const result = await claim(openClaimBudget({ perWebhook: 2, blockedWebhooks: [webhookId] }));
    expect(result.deliveries).toEqual([]);
    expect(result.moreDue).toBe(true);
  });

  it('says more is due when a team at its budget could take nothing', async () => {
    const team = nextTeam++;
    await backlog(team, [nextWebhook++], 1);
    const result = await claim(openClaimBudget({ blockedTeams: [team] }));
    expect(result.deliveries).toEqual([]);
    expect(result.moreDue).toBe(true);
  });

  it('says nothing is left for an endpoint at its budget that has nothing due', async () => {
    const team = nextTeam++;
    const [blocked, other] = [nextWebhook++, nextWebhook++];
    await backlog(team, [other], 1);
    const result = await claim(openClaimBudget({ blockedWebhooks: [blocked] }));
    expect(result.deliveries.map((delivery) => delivery.webhookId)).toEqual([other]);
    expect(result.moreDue).toBe(false);
  });
});

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
