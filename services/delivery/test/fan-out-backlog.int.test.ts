// The fan-out backlog against a real PostgreSQL: events are drained in the order they were
// published (their stream sequence), however they were stored, a drain takes what the allowance
// covers, and each event's deliveries go to the webhooks stored with it.
import { randomUUID } from 'node:crypto';
import type { Pool } from '@worklane/db';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { DeliveryStore, type EventFanOut } from '../src/data/deliveries';
import { FanOutBacklog } from '../src/data/fan-out-backlog';

let database: ServiceDatabase;
let pool: Pool;
let backlog: FanOutBacklog;

beforeAll(async () => {
  database = await createServiceDatabase('delivery');
  pool = database.pool('fan-out-backlog-test');
  backlog = new FanOutBacklog(pool, new DeliveryStore(pool));
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

const event = (teamId: number, streamSequence: number, webhookIds: number[]): EventFanOut => ({
  event: { id: randomUUID(), event: 'issue.created', created_at: '2026-11-23T10:00:00.000000Z', team_id: teamId },
  body: Buffer.from(JSON.stringify({ sequence: streamSequence })),
  traceContext: {},
  webhookIds,
  firstDelayMs: 0,
  streamSequence,
});

const createdSequences = async (teamId: number) =>
  (
    await pool.query<{ sequence: number; webhook_id: string }>(
      `SELECT (convert_from(body, 'UTF8')::json->>'sequence')::int AS sequence, webhook_id FROM deliveries WHERE team_id = $1 ORDER BY 1, webhook_id`,
      [teamId],
    )
  ).rows;

it("drains a team's events in stream order within its allowance, to the webhooks stored with each, and leaves other teams' events alone", async () => {
  // Stored out of order, as two concurrent batches may store them.
  await backlog.queue([event(7, 30, [1, 2]), event(7, 40, [1, 2])]);
  await backlog.queue([event(7, 10, [1, 2]), event(7, 20, [1]), event(8, 15, [5])]);
  // Stored twice (a message redelivered by the bus): kept once.
  const again = event(7, 50, [3]);
  await backlog.queue([again]);
  await backlog.queue([again]);
  expect(await backlog.waitingTeams()).toEqual([7, 8]);
  expect(await backlog.size()).toBe(6);

  // An allowance of 3 covers the events at 10 (two deliveries) and 20 (one), not the one at 30.
  expect(await backlog.drain(7, 3, 0)).toEqual({ events: 2, deliveries: 3, more: true });
  expect((await createdSequences(7)).map((row) => row.sequence)).toEqual([10, 10, 20]);
  // A drain always takes one event, even one larger than the allowance.
  expect(await backlog.drain(7, 1, 0)).toEqual({ events: 1, deliveries: 2, more: true });
  expect(await backlog.drain(7, 100, 0)).toEqual({ events: 2, deliveries: 3, more: false });
  const rows = await createdSequences(7);
  expect(rows.map((row) => `${row.sequence}->${row.webhook_id}`)).toEqual(['10->1', '10->2', '20->1', '30->1', '30->2', '40->1', '40->2', '50->3']);
  expect(await backlog.waitingTeams()).toEqual([8]);
  expect(await createdSequences(8)).toEqual([]);
});
