// The fast path from fan-out to sending against a real PostgreSQL: the deliveries that may go at
// once are stored already claimed (leased) by the replica that fans the event out; everything else
// is stored due for the claim, as before. Two stores on two pools stand for two replicas. Time is
// moved by rewriting rows (a lease run out), never by sleeping.
import { randomUUID } from 'node:crypto';
import type { Pool } from '@worklane/db';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { DeliveryStore, type AttemptOutcome, type ClaimedDelivery, type EventFanOut } from '../src/data/deliveries';
import { openClaimBudget } from './support/claim-budget';

jest.setTimeout(60_000);

const LEASE_MS = 30_000;

let database: ServiceDatabase;
let replicaA: DeliveryStore;
let replicaB: DeliveryStore;
let unordered: DeliveryStore;
let pool: Pool;

beforeAll(async () => {
  database = await createServiceDatabase('delivery');
  const pools = ['a', 'b', 'test'].map((name) => database.pool(`fast-path-${name}`));
  replicaA = new DeliveryStore(pools[0]!, { orderWaitMs: 60_000 });
  replicaB = new DeliveryStore(pools[1]!, { orderWaitMs: 60_000 });
  unordered = new DeliveryStore(pools[0]!, { orderWaitMs: 0 });
  pool = pools[2]!;
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

let nextTeam = 500;
let nextSequence = 1;
let nextWebhook = 5_000;
const newTeam = () => nextTeam++;
const newWebhook = () => nextWebhook++;

const budget = openClaimBudget();

function event(teamId: number, issueId: number, webhookIds: number[]): EventFanOut {
  const sequence = nextSequence++;
  return {
    event: { id: randomUUID(), event: 'issue.updated', created_at: '2026-11-23T10:00:00.123456Z', team_id: teamId, issue_id: issueId },
    body: Buffer.from(JSON.stringify({ sequence, issue: issueId })),
    traceContext: {},
    webhookIds,
    firstDelayMs: 0,
    streamSequence: sequence,
  };
}

/** Every delivery of the fan-out may go at once, as far as the caller's slots go. */
const allAtOnce = (events: EventFanOut[]) => events.map((fanOut) => fanOut.webhookIds.map(() => true));

const claimFor = async (store: DeliveryStore, teamId: number) => (await store.claimDue(budget, LEASE_MS)).deliveries.filter((delivery) => delivery.teamId === teamId);

const rowsOf = async (teamId: number) =>
  (
    await pool.query<{ id: string; webhook_id: string; leased: boolean; due_in_ms: number; status: string; attempt_count: number }>(
      `SELECT id, webhook_id, lease_token IS NOT NULL AS leased, (extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS due_in_ms, status, attempt_count
       FROM deliveries WHERE team_id = $1 ORDER BY stream_seq, webhook_id`,
      [teamId],
    )
  ).rows;

const succeeded: AttemptOutcome = {
  startedAtMs: Date.now(),
  url: 'https://receiver.example/hook',
  statusCode: 200,
  error: null,
  durationMs: 3,
  responseBody: 'ok',
  status: 'succeeded',
  failureReason: null,
  retryInMs: null,
};

describe('storing a fan-out with deliveries that may go at once', () => {
  it('stores those the caller has a slot for leased to it, ready to send, and the others due for a claim', async () => {
    const team = newTeam();
    const [fast, slow] = [newWebhook(), newWebhook()];
    const fanOut = event(team, 1, [fast, slow]);
    const { created, leased } = await replicaA.createForEventsSendingNow([fanOut], [[true, false]], LEASE_MS);
    expect(created).toEqual([2]);
    expect(leased).toHaveLength(1);
    const [delivery] = leased as [ClaimedDelivery];
    expect(delivery).toMatchObject({ eventId: fanOut.event.id, event: 'issue.updated', teamId: team, webhookId: fast, attemptCount: 0, isRedelivery: false });
    expect(delivery.body.equals(fanOut.body)).toBe(true);
    expect(delivery.eventCreatedAtMs).toBe(Date.parse('2026-11-23T10:00:00.123Z'));

    const rows = await rowsOf(team);
    const leasedRow = rows.find((row) => Number(row.webhook_id) === fast)!;
    const dueRow = rows.find((row) => Number(row.webhook_id) === slow)!;
    expect(leasedRow).toMatchObject({ id: delivery.id, leased: true, status: 'pending' });
    // Reserved for the length of a lease, as a claim reserves what it takes.
    expect(leasedRow.due_in_ms).toBeGreaterThan(LEASE_MS / 2);
    expect(dueRow).toMatchObject({ leased: false, status: 'pending' });
    expect(dueRow.due_in_ms).toBeLessThanOrEqual(0);

    // No claim of either replica takes the leased one; the other is there for them.
    expect((await claimFor(replicaB, team)).map((claimed) => claimed.webhookId)).toEqual([slow]);
    expect(await claimFor(replicaA, team)).toEqual([]);

    // Its attempt is recorded like any claimed delivery's.
    expect(await replicaA.recordAttempts([{ delivery, outcome: succeeded }])).toEqual([true]);
    expect((await rowsOf(team)).find((row) => row.id === delivery.id)).toMatchObject({ status: 'succeeded', attempt_count: 1, leased: false });
  });

  it('leaves a delivery whose replica died to the claim of another once its lease runs out, and the late replica records nothing', async () => {
    const team = newTeam();
    const webhookId = newWebhook();
    const { leased } = await replicaA.createForEventsSendingNow([event(team, 2, [webhookId])], [[true]], LEASE_MS);
    const [orphan] = leased as [ClaimedDelivery];
    expect(await claimFor(replicaB, team)).toEqual([]);

    // Replica A is gone; its lease runs out.
    await pool.query(`UPDATE deliveries SET next_attempt_at = now() WHERE id = $1`, [orphan.id]);
    const [takenOver] = await claimFor(replicaB, team);
    expect(takenOver?.id).toBe(orphan.id);
    expect(takenOver?.leaseToken).not.toBe(orphan.leaseToken);
    expect(await replicaB.recordAttempts([{ delivery: takenOver!, outcome: succeeded }])).toEqual([true]);
    // An attempt of the old lease that finishes after all is not recorded over it.
    expect(await replicaA.recordAttempts([{ delivery: orphan, outcome: succeeded }])).toEqual([false]);
    const [row] = await rowsOf(team);
    expect(row).toMatchObject({ status: 'succeeded', attempt_count: 1 });
    const attempts = await pool.query(`SELECT number FROM delivery_attempts WHERE delivery_id = $1`, [orphan.id]);
    expect(attempts.rows).toEqual([{ number: 1 }]);
  });

  it('keeps a later event of an issue off the fast path while an earlier one to the same webhook is pending; other issues go', async () => {
    const team = newTeam();
    const webhookId = newWebhook();
    const first = event(team, 3, [webhookId]);
    expect((await replicaA.createForEventsSendingNow([first], allAtOnce([first]), LEASE_MS)).leased).toHaveLength(1);

    const second = event(team, 3, [webhookId]);
    const otherIssue = event(team, 4, [webhookId]);
    const { created, leased } = await replicaA.createForEventsSendingNow([second, otherIssue], allAtOnce([second, otherIssue]), LEASE_MS);
    expect(created).toEqual([1, 1]);
    expect(leased.map((delivery) => delivery.eventId)).toEqual([otherIssue.event.id]);
    // The second waits for the claim, which keeps it behind the first.
    expect(await claimFor(replicaB, team)).toEqual([]);
  });

  it('keeps a later event of an issue off the fast path when the earlier one is stored by the same statement', async () => {
    const team = newTeam();
    const webhookId = newWebhook();
    const first = event(team, 5, [webhookId]);
    const second = event(team, 5, [webhookId]);
    const otherIssue = event(team, 6, [webhookId]);
    const { created, leased } = await replicaA.createForEventsSendingNow([first, second, otherIssue], allAtOnce([first, second, otherIssue]), LEASE_MS);
    expect(created).toEqual([1, 1, 1]);
    expect(leased.map((delivery) => delivery.eventId).sort()).toEqual([first.event.id, otherIssue.event.id].sort());
    // The second waits for the claim, which keeps it behind the first until that one is recorded.
    expect(await claimFor(replicaB, team)).toEqual([]);
  });

  it('says, when the earlier event of an issue is recorded, that the later one waiting behind it may be claimed now', async () => {
    const team = newTeam();
    const webhookId = newWebhook();
    const first = event(team, 9, [webhookId]);
    const second = event(team, 9, [webhookId]);
    const [earlier] = (await replicaA.createForEventsSendingNow([first], allAtOnce([first]), LEASE_MS)).leased as [ClaimedDelivery];
    expect((await replicaA.createForEventsSendingNow([second], allAtOnce([second]), LEASE_MS)).leased).toEqual([]);
    expect(await claimFor(replicaB, team)).toEqual([]);

    expect(await replicaA.recordAttemptsAndFollow([{ delivery: earlier, outcome: succeeded }])).toEqual({ recorded: [true], nextOfIssueDue: 1 });
    const [next] = await claimFor(replicaB, team);
    expect(next?.eventId).toBe(second.event.id);
    // Nothing waits behind the last one.
    expect(await replicaB.recordAttemptsAndFollow([{ delivery: next!, outcome: succeeded }])).toEqual({ recorded: [true], nextOfIssueDue: 0 });
  });

  it('lets deliveries of one issue go at once regardless of each other when they never wait for each other', async () => {
    const team = newTeam();
    const webhookId = newWebhook();
    const first = event(team, 5, [webhookId]);
    const second = event(team, 5, [webhookId]);
    expect((await unordered.createForEventsSendingNow([first], allAtOnce([first]), LEASE_MS)).leased).toHaveLength(1);
    expect((await unordered.createForEventsSendingNow([second], allAtOnce([second]), LEASE_MS)).leased).toHaveLength(1);
  });

  it('keeps an endpoint with due deliveries waiting for a claim off the fast path, so those go first', async () => {
    const team = newTeam();
    const [busy, idle] = [newWebhook(), newWebhook()];
    await replicaA.createForEvents([event(team, 6, [busy])]);
    const next = event(team, 7, [busy, idle]);
    const { leased } = await replicaA.createForEventsSendingNow([next], allAtOnce([next]), LEASE_MS);
    expect(leased.map((delivery) => delivery.webhookId)).toEqual([idle]);
    const claimed = await claimFor(replicaB, team);
    expect(claimed.map((delivery) => delivery.webhookId)).toEqual([busy, busy]);
  });

  it('sends nothing again for an event stored before (a redelivered message)', async () => {
    const team = newTeam();
    const webhookId = newWebhook();
    const fanOut = event(team, 8, [webhookId]);
    await replicaA.createForEvents([fanOut]);
    const again = await replicaA.createForEventsSendingNow([fanOut], allAtOnce([fanOut]), LEASE_MS);
    expect(again).toEqual({ created: [0], leased: [] });
    const [row] = await rowsOf(team);
    expect(row).toMatchObject({ leased: false, status: 'pending' });
  });
});
