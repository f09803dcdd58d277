// The event consumer against a real PostgreSQL and NATS JetStream: each fan-out statement carries
// one team's events, and one team holds all the fan-out statements but one at most. A team whose
// fan-out is slow (here: its webhook look-ups are held, as a slow webhook service or a large
// statement would hold them) leaves a statement free for another team, whose events are fanned out
// while the first team's are still waiting. Every wait is on a condition, never on a duration.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createPool, migrate, type Pool } from '@worklane/db';
import { ensureDeliveryConsumer, ensureIssueEventsStream, jetstream, jetstreamManager } from '@worklane/messaging';
import { createLogger } from '@worklane/observability';
import { createTestDatabase, startNatsServer, type NatsServer, type TestDatabase } from '@worklane/testing';
import type { WebhookDirectory } from '../src/clients/webhooks';
import { DeliveryStore } from '../src/data/deliveries';
import { FanOutBacklog } from '../src/data/fan-out-backlog';
import { EventConsumer } from '../src/events/consumer';
import { FanOutBudget } from '../src/events/fan-out-budget';
import { eventually } from './support/system';
import { webhookTarget } from './support/webhook-target';

jest.setTimeout(60_000);

const FLOOD_TEAM = 71;
const OTHER_TEAM = 72;

let database: TestDatabase;
let pool: Pool;
let nats: NatsServer;
let connection: NatsConnection;
let consumer: EventConsumer;

/** Webhook look-ups of the flooding team wait until released (while `holding`); the other team's answer at once. */
const held: { teamId: number; release: () => void }[] = [];
let holding = true;
const directory: WebhookDirectory = {
  async listSubscriptions(teamId) {
    const answer = [webhookTarget(teamId * 100 + 1, teamId)];
    if (teamId !== FLOOD_TEAM || !holding) return answer;
    await new Promise<void>((resolve) => held.push({ teamId, release: resolve }));
    return answer;
  },
  getWebhook: async () => undefined,
  disableWebhook: async () => undefined,
};

beforeAll(async () => {
  [database, nats] = await Promise.all([createTestDatabase(), startNatsServer()]);
  await migrate(database.url, 'delivery', join(__dirname, '..', 'migrations'));
  pool = createPool({ url: database.url, schema: 'delivery', max: 8, applicationName: 'fan-out-fairness-test' });
  connection = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(connection);
  const declare = async () => {
    await ensureIssueEventsStream(jsm);
    await ensureDeliveryConsumer(jsm);
  };
  await declare();
  const store = new DeliveryStore(pool);
  consumer = new EventConsumer({
    js: jetstream(connection),
    store,
    webhooks: directory,
    logger: createLogger('delivery-test', 'warn'),
    concurrency: 16,
    firstDelayMs: 0,
    declare,
    budget: new FanOutBudget(0, 1),
    backlog: new FanOutBacklog(pool, store),
    onDeliveriesCreated: () => {},
    onQueued: () => {},
    recordDeadLettered: async () => 0,
  });
  consumer.start();
}, 60_000);
afterAll(async () => {
  holding = false;
  for (const entry of held.splice(0)) entry.release();
  await consumer?.stop();
  await connection?.close();
  await pool?.end();
  await Promise.all([nats?.stop(), database?.drop()]);
});

/** Publishes an issue.created event of `teamId` (in the flat form the consumer still reads). */
async function publish(teamId: number, issueId: number): Promise<string> {
  const eventId = randomUUID();
  const at = '2026-11-24T10:00:00.000000Z';
  const message = JSON.stringify({
    id: eventId,
    event: 'issue.created',
    created_at: at,
    team_id: teamId,
    issue: {
      id: issueId,
      project_id: 1,
      number: issueId,
      reference_code: `FAIR-${issueId}`,
      title: `Issue ${issueId}`,
      description: null,
      url: null,
      type: 'task',
      status: 'triage',
      priority: 'none',
      assigned_to: null,
      estimated_date: null,
      created_by: 1,
      created_at: at,
      updated_at: at,
    },
  });
  await jetstream(connection).publish('issues.created', message, { msgID: eventId });
  return eventId;
}

const deliveriesOf = async (teamId: number) =>
  (await pool.query<{ event_id: string; stream_seq: string }>('SELECT event_id, stream_seq FROM deliveries WHERE team_id = $1 ORDER BY stream_seq', [teamId])).rows;

it("fans out another team's event while one team's fan-out statements are held, and the held team's events in order afterwards", async () => {
  // The flooding team's first two events each take a statement (their look-ups are held); its
  // third waits for one of them, as one team holds all the statements but one.
  const flood = [await publish(FLOOD_TEAM, 1)];
  await eventually(
    async () => held.length,
    (count) => count === 1,
    20_000,
    "the flooding team's first statement",
  );
  flood.push(await publish(FLOOD_TEAM, 2));
  await eventually(
    async () => held.length,
    (count) => count === 2,
    20_000,
    "the flooding team's second statement",
  );
  flood.push(await publish(FLOOD_TEAM, 3));

  // The other team's event is fanned out meanwhile, through the statement left free.
  const other = await publish(OTHER_TEAM, 4);
  const otherRows = await eventually(
    () => deliveriesOf(OTHER_TEAM),
    (rows) => rows.length === 1,
    20_000,
    "the other team's delivery",
  );
  expect(otherRows[0]!.event_id).toBe(other);
  expect(held).toHaveLength(2);
  expect(await deliveriesOf(FLOOD_TEAM)).toEqual([]);

  // Released, the flooding team's events are all fanned out, in the order they were published.
  const floodRows = await eventually(
    async () => {
      for (const entry of held.splice(0)) entry.release();
      return deliveriesOf(FLOOD_TEAM);
    },
    (rows) => rows.length === flood.length,
    20_000,
    "the flooding team's deliveries",
  );
  expect(floodRows.map((row) => row.event_id)).toEqual(flood);
});
