// The event consumer's fast path against a real PostgreSQL and NATS JetStream: the fan-out that
// hands deliveries to the sender at once commits without waiting for the WAL flush, so the first
// attempt starts at once, and its event is acknowledged on the bus only after a later commit that
// did wait for the flush. Until then JetStream keeps the event: when the flush fails (as it would
// with PostgreSQL crashing, which also loses the unflushed fan-out), the event is offered again
// and fanned out again. The flush is held or failed by the test; every wait is on a condition.
import { randomUUID } from 'node:crypto';
import { createPool } from '@worklane/db';
import { DELIVERY_CONSUMER, ISSUE_EVENTS_STREAM } from '@worklane/messaging';
import type { WebhookDirectory } from '../src/clients/webhooks';
import { DeliveryStore, type ClaimedDelivery } from '../src/data/deliveries';
import type { SendsAtOnce } from '../src/events/consumer';
import { startConsumerStack, type ConsumerStack } from './support/consumer-stack';
import { publishIssueCreated } from './support/issue-events';
import { eventually } from './support/system';
import { webhookTarget } from './support/webhook-target';

jest.setTimeout(60_000);

const TEAM = 81;
const WEBHOOK = 8_101;

let stack: ConsumerStack;

/** What the sender was handed at once. */
const sent: ClaimedDelivery[] = [];
const sender: SendsAtOnce = {
  leaseMs: 30_000,
  reserveAtOnce: () => ({ release: () => {} }),
  sendAtOnce: (delivery, _webhook, slot) => {
    sent.push(delivery);
    slot.release();
  },
};

/** The flush that lets events be acknowledged: held while `held`, refused `failures` times. */
let held = false;
let failures = 0;
let flushes = 0;
const waitingForRelease: (() => void)[] = [];
async function flushCommits(): Promise<void> {
  flushes += 1;
  if (held) await new Promise<void>((resolve) => waitingForRelease.push(resolve));
  if (failures > 0) {
    failures -= 1;
    throw new Error('the flush was refused (as by a PostgreSQL that crashed)');
  }
  await stack.store.flushCommits();
}
const release = () => {
  held = false;
  for (const resolve of waitingForRelease.splice(0)) resolve();
};

const directory: WebhookDirectory = {
  listSubscriptions: async (teamId) => [webhookTarget(WEBHOOK, teamId)],
  getWebhook: async () => undefined,
  disableWebhook: async () => undefined,
};

beforeAll(async () => {
  stack = await startConsumerStack({
    name: 'fan-out-durable-ack-test',
    webhooks: directory,
    poolMax: 4,
    consumer: { concurrency: 8, sendAtOnce: sender, ackFlushWithinMs: 0, flushCommits },
  });
}, 60_000);
afterAll(async () => {
  release();
  failures = 0;
  await stack?.stop();
});

let nextIssue = 1;

/** Publishes an issue.created event of TEAM; resolves to its id. */
const publish = () => publishIssueCreated(stack.connection, TEAM, nextIssue++, 'ACK');

/** The consumer's messages handed out and not yet acknowledged, and those not yet handed out. */
const consumerState = async () => {
  const info = await stack.jsm.consumers.info(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER);
  return { unacked: info.num_ack_pending, waiting: info.num_pending };
};
const allAcknowledged = (state: { unacked: number; waiting: number }) => state.unacked === 0 && state.waiting === 0;

const deliveriesOf = async (eventId: string) =>
  (await stack.pool.query<{ id: string; leased: boolean }>('SELECT id, lease_token IS NOT NULL AS leased FROM deliveries WHERE event_id = $1', [eventId])).rows;

it('hands the delivery to the sender before its commit is flushed, and acknowledges the event only after the flush', async () => {
  held = true;
  const eventId = await publish();
  const [delivery] = await eventually(
    async () => sent.filter((each) => each.eventId === eventId),
    (handed) => handed.length === 1,
    20_000,
    'the delivery handed to the sender',
  );
  // Stored (leased to this replica) and being sent, while the event is still held on the bus.
  expect(await deliveriesOf(eventId)).toEqual([{ id: delivery!.id, leased: true }]);
  await eventually(
    async () => waitingForRelease.length,
    (count) => count > 0,
    20_000,
    'the flush to start',
  );
  expect(await consumerState()).toEqual({ unacked: 1, waiting: 0 });

  release();
  await eventually(consumerState, allAcknowledged, 20_000, 'the event to be acknowledged after the flush');
  expect(sent.filter((each) => each.eventId === eventId)).toHaveLength(1);
});

it('offers the event again when the flush fails, and its second fan-out stores and sends again what the first lost', async () => {
  held = true;
  failures = 1;
  const eventId = await publish();
  await eventually(
    async () => sent.filter((each) => each.eventId === eventId).length,
    (count) => count === 1,
    20_000,
    'the first fan-out',
  );
  // PostgreSQL crashed before flushing the fan-out's commit: its delivery is gone, and the flush fails.
  await stack.pool.query('DELETE FROM deliveries WHERE event_id = $1', [eventId]);
  const flushesBefore = flushes;
  release();

  // JetStream offers the event again: its delivery is stored and sent again, then acknowledged.
  await eventually(
    async () => ({ handed: sent.filter((each) => each.eventId === eventId).length, state: await consumerState(), flushes }),
    ({ handed, state }) => handed === 2 && allAcknowledged(state),
    30_000,
    'the event fanned out again and acknowledged',
  );
  expect(flushes).toBeGreaterThan(flushesBefore);
  expect(await deliveriesOf(eventId)).toHaveLength(1);
});

it('offers the event again when the flush fails, and its second fan-out sends nothing twice when the first was stored after all', async () => {
  failures = 1;
  const eventId = await publish();
  await eventually(consumerState, allAcknowledged, 30_000, 'the event acknowledged after its second fan-out');
  expect(failures).toBe(0);
  expect(sent.filter((each) => each.eventId === eventId)).toHaveLength(1);
  expect(await deliveriesOf(eventId)).toHaveLength(1);
});

describe('the fast path’s statement', () => {
  it('commits on its own terms only: the session it ran on still waits for the flush at commit', async () => {
    const single = createPool({ url: stack.database.url, schema: 'delivery', max: 1, applicationName: 'fan-out-durable-ack-session' });
    try {
      // Whatever the server's default (the test server's is off), this session waits for the flush.
      await single.query('SET synchronous_commit = on');
      const onItsOwn = new DeliveryStore(single);
      const event = { id: randomUUID(), event: 'issue.created' as const, created_at: '2026-11-24T10:00:00.000000Z', team_id: TEAM, issue_id: 9_999 };
      const { leased } = await onItsOwn.createForEventsSendingNow(
        [{ event, body: Buffer.from('{}'), traceContext: {}, webhookIds: [WEBHOOK + 1], firstDelayMs: 0, streamSequence: 0 }],
        [[true]],
        30_000,
      );
      expect(leased).toHaveLength(1);
      const { rows } = await single.query<{ synchronous_commit: string }>('SHOW synchronous_commit');
      expect(rows[0]?.synchronous_commit).toBe('on');
      await expect(onItsOwn.flushCommits()).resolves.toBeUndefined();
    } finally {
      await single.end();
    }
  });
});
