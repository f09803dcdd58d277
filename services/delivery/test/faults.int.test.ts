// Nothing is lost when a process, NATS or a receiver fails: each test counts the events that went
// in (issues created through the gateway) and the deliveries that came out at the receiver, for two
// webhooks. Duplicates are tolerated only as re-sends of the same delivery (same id, same bytes).
import type { ReceivedRequest } from './support/receiver';
import { createIssue, createWebhook, eventually, payloadOf, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

const PATHS = ['/first', '/second'];

// Recovery waits for leases (5 s) and unacked events (3 s) to expire.
jest.setTimeout(90_000);

let env: DeliverySystem;

beforeAll(async () => {
  // A schedule long enough (about 20 s) to outlast the outages below.
  env = await startDeliverySystem({ retrySchedule: '0,1,2,3,5,8' });
}, 120_000);
afterAll(() => env?.stop());

async function teamWithTwoWebhooks(name: string): Promise<{ team: TestTeam; prefix: string }> {
  const team = await env.newTeam(name);
  const prefix = `/${name.toLowerCase().replace(/\W+/g, '-')}`;
  for (const path of PATHS) {
    await createWebhook(team, { url: env.receiver.url(`${prefix}${path}`), events: ['issue.created'], secret: 'fault-tolerant-secret' });
  }
  return { team, prefix };
}

/** Creates issues one after another until `stop()` is called; resolves to their ids. */
function issueFlow(team: TestTeam, pauseMs = 20) {
  let stopped = false;
  const ids: number[] = [];
  const done = (async () => {
    while (!stopped) {
      ids.push((await createIssue(team, { title: `Flow ${ids.length + 1}` })).id);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    return ids;
  })();
  return {
    ids,
    /** Resolves once at least `count` issues exist. */
    async reach(count: number) {
      for (let waited = 0; ids.length < count; waited += 20) {
        if (waited > 30_000) throw new Error(`only ${ids.length} issues created`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop() {
      stopped = true;
      return done;
    },
  };
}

const createdIssueIds = (requests: ReceivedRequest[]) => new Set(requests.map((request) => payloadOf(request).issue.id as number));

/**
 * Waits until every issue reached both webhooks, then checks there is exactly one delivery per
 * (event, webhook) and that every repeat of a delivery id carried the same bytes.
 */
async function expectEveryEventDeliveredOnce(prefix: string, issueIds: number[]): Promise<{ duplicates: number }> {
  const { receiver } = env;
  await receiver.waitFor(
    () => PATHS.every((path) => createdIssueIds(receiver.at(`${prefix}${path}`)).size >= issueIds.length),
    60_000,
    `${issueIds.length} issues at both webhooks`,
  );
  let duplicates = 0;
  for (const path of PATHS) {
    const requests = receiver.at(`${prefix}${path}`);
    expect([...createdIssueIds(requests)].sort((a, b) => a - b)).toEqual([...issueIds].sort((a, b) => a - b));
    const bodyByDelivery = new Map<string, Buffer>();
    const deliveryByEvent = new Map<string, string>();
    for (const request of requests) {
      const deliveryId = request.headers['x-webhook-delivery']!;
      const eventId = payloadOf(request).id as string;
      const seenBody = bodyByDelivery.get(deliveryId);
      if (seenBody) {
        duplicates += 1;
        expect(request.body.equals(seenBody)).toBe(true);
      }
      bodyByDelivery.set(deliveryId, request.body);
      expect(deliveryByEvent.get(eventId) ?? deliveryId).toBe(deliveryId);
      deliveryByEvent.set(eventId, deliveryId);
    }
    expect(deliveryByEvent.size).toBe(issueIds.length);
  }
  return { duplicates };
}

it('loses nothing when the delivery service is killed with SIGKILL mid-stream and restarted', async () => {
  const { team, prefix } = await teamWithTwoWebhooks('Delivery crash');
  // Slow answers keep attempts in flight at the moment of the kill.
  for (const path of PATHS) env.receiver.on(`${prefix}${path}`, { status: 200, delayMs: 100 });
  const delivery = env.system.services.delivery!;
  const flow = issueFlow(team);
  await flow.reach(15);
  await delivery.kill();
  await flow.reach(25);
  await delivery.restart();
  await flow.reach(40);
  const ids = await flow.stop();
  await expectEveryEventDeliveredOnce(prefix, ids);
});

it('loses nothing when NATS restarts while events flow', async () => {
  const { team, prefix } = await teamWithTwoWebhooks('NATS restart');
  const flow = issueFlow(team);
  await flow.reach(15);
  await env.nats.restart();
  await flow.reach(40);
  const ids = await flow.stop();
  await expectEveryEventDeliveredOnce(prefix, ids);
});

it('loses nothing when the issue service dies between committing events and publishing them', async () => {
  const { team, prefix } = await teamWithTwoWebhooks('Issue crash');
  const issue = env.system.services.issue!;
  // With NATS away, the relay cannot publish: the events are committed and stuck in the outbox.
  await env.nats.shutdown();
  const ids: number[] = [];
  for (let i = 0; i < 10; i += 1) ids.push((await createIssue(team, { title: `Unpublished ${i}` })).id);
  const metrics = await (await fetch(`${issue.metricsUrl}/metrics`)).text();
  expect(Number(/^worklane_outbox_backlog(?:\{[^}]*\})? (\d+)$/m.exec(metrics)?.[1])).toBe(10);
  await issue.kill();
  await env.nats.start();
  await issue.restart();
  await expectEveryEventDeliveredOnce(prefix, ids);
});

it('loses nothing when the receiver is down for a while and then comes back', async () => {
  const { team, prefix } = await teamWithTwoWebhooks('Receiver outage');
  const webhooks = (await team.client.get(`/teams/${team.team_id}/webhooks`)).body.data as { id: number }[];
  await env.receiver.down();
  const ids: number[] = [];
  try {
    for (let i = 0; i < 10; i += 1) ids.push((await createIssue(team, { title: `While down ${i}` })).id);
    // Before the receiver returns, every delivery has failed (connection refused) or, once the
    // webhook's circuit breaker opened, waits for its probe: deferred past when it was created.
    for (const webhook of webhooks) {
      const list = await eventually(
        async () =>
          (await team.client.get(`/teams/${team.team_id}/webhooks/${webhook.id}/deliveries`)).body.data as {
            attempt_count: number;
            created_at: string;
            next_attempt_at: string | null;
          }[],
        (rows) =>
          rows.length === ids.length &&
          rows.every((delivery) => delivery.attempt_count >= 1 || (delivery.next_attempt_at !== null && Date.parse(delivery.next_attempt_at) > Date.parse(delivery.created_at))),
        20_000,
        'a failed attempt or a deferral of every delivery',
      );
      expect(list.some((delivery) => delivery.attempt_count >= 1)).toBe(true);
    }
  } finally {
    await env.receiver.up();
  }
  await expectEveryEventDeliveredOnce(prefix, ids);
});
