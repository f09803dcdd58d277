// What a claim says about the due deliveries its budgets left behind, against a real PostgreSQL:
// the sender claims again as soon as slots free up when it was told that more is due.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createPool, migrate, type Pool } from '@worklane/db';
import { createTestDatabase, type TestDatabase } from '@worklane/testing';
import { DeliveryStore, type EventFanOut } from '../src/data/deliveries';
import type { ClaimBudget } from '../src/sending/budgets';

jest.setTimeout(60_000);

let database: TestDatabase;
let pool: Pool;
let store: DeliveryStore;

beforeAll(async () => {
  database = await createTestDatabase();
  await migrate(database.url, 'delivery', join(__dirname, '..', 'migrations'));
  pool = createPool({ url: database.url, schema: 'delivery', max: 4, applicationName: 'claim-left-behind' });
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

const budget = (overrides: Partial<ClaimBudget> = {}): ClaimBudget => ({
  limit: 100,
  perTeam: 100,
  perWebhook: 100,
  blockedTeams: [],
  teamAllowances: [],
  blockedWebhooks: [],
  webhookAllowances: [],
  ...overrides,
});

/** Claims with `claimBudget`, then gives everything back so the next test starts from nothing due. */
async function claim(claimBudget: ClaimBudget) {
  const result = await store.claimDue(claimBudget, 30_000);
  await pool.query(`UPDATE deliveries SET status = 'succeeded', lease_token = NULL, next_attempt_at = NULL WHERE status = 'pending'`);
  return result;
}

describe('a claim says whether its budgets left due deliveries behind', () => {
  it('says nothing is left when it took everything due', async () => {
    const team = nextTeam++;
    const [a, b] = [nextWebhook++, nextWebhook++];
    await backlog(team, [a, b], 3);
    const result = await claim(budget({ perWebhook: 5 }));
    expect(result.deliveries).toHaveLength(6);
    expect(result.moreDue).toBe(false);
  });

  it('says more is due when an endpoint took all it was allowed', async () => {
    const team = nextTeam++;
    const [busy, quiet] = [nextWebhook++, nextWebhook++];
    await backlog(team, [busy], 5);
    await backlog(team, [quiet], 1);
    // `busy` has one attempt in flight already: one more may start.
    const result = await claim(budget({ perWebhook: 2, webhookAllowances: [[busy, 1]] }));
    expect(result.deliveries.map((delivery) => delivery.webhookId).sort()).toEqual([busy, quiet].sort());
    expect(result.moreDue).toBe(true);
  });

  it('says more is due when a team took all it was allowed', async () => {
    const team = nextTeam++;
    const webhookIds = [nextWebhook++, nextWebhook++, nextWebhook++];
    await backlog(team, webhookIds, 2);
    const result = await claim(budget({ perWebhook: 5, teamAllowances: [[team, 3]] }));
    expect(result.deliveries).toHaveLength(3);
    expect(result.moreDue).toBe(true);
  });

  it('says more is due when an endpoint at its budget could take nothing', async () => {
    const team = nextTeam++;
    const webhookId = nextWebhook++;
    await backlog(team, [webhookId], 2);
    const result = await claim(budget({ perWebhook: 2, blockedWebhooks: [webhookId] }));
    expect(result.deliveries).toEqual([]);
    expect(result.moreDue).toBe(true);
  });

  it('says more is due when a team at its budget could take nothing', async () => {
    const team = nextTeam++;
    await backlog(team, [nextWebhook++], 1);
    const result = await claim(budget({ blockedTeams: [team] }));
    expect(result.deliveries).toEqual([]);
    expect(result.moreDue).toBe(true);
  });

  it('says nothing is left for an endpoint at its budget that has nothing due', async () => {
    const team = nextTeam++;
    const [blocked, other] = [nextWebhook++, nextWebhook++];
    await backlog(team, [other], 1);
    const result = await claim(budget({ blockedWebhooks: [blocked] }));
    expect(result.deliveries.map((delivery) => delivery.webhookId)).toEqual([other]);
    expect(result.moreDue).toBe(false);
  });
});
