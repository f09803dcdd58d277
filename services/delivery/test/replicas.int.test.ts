// Two delivery-service replicas share one team's deliveries: every delivery reaches the receiver,
// none is attempted twice, and each replica sends some of them. Waits are on conditions only.
import type { ServiceHandle } from '@worklane/testing';
import { createIssue, createWebhook, eventually, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

jest.setTimeout(120_000);

const EVENTS = 60;

let env: DeliverySystem;
let second: ServiceHandle;
let team: TestTeam;

beforeAll(async () => {
  env = await startDeliverySystem();
  second = await env.system.startService('delivery', env.deliveryEnv);
  team = await env.newTeam('Replicas');
}, 120_000);
afterAll(async () => {
  await second?.stop();
  await env?.stop();
});

/** Deliveries a replica has finished, by outcome, from its own metrics. */
async function delivered(metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const line = /^worklane_webhook_deliveries_total\{[^}]*outcome="succeeded"[^}]*\} (\d+)$/m.exec(text);
  return Number(line?.[1] ?? 0);
}

it('two replicas share the deliveries: each is attempted once, and neither replica is idle', async () => {
  const webhook = await createWebhook(team, { url: env.receiver.url('/replicas'), events: ['issue.created'], secret: 'replica-signing-secret' });
  for (let i = 0; i < EVENTS; i++) await createIssue(team, { title: `Replica issue ${i}` });

  await env.receiver.waitFor(
    (requests) => new Set(requests.filter((r) => r.path === '/replicas').map((r) => r.headers['x-webhook-delivery'])).size >= EVENTS,
    60_000,
    `${EVENTS} deliveries`,
  );
  const received = env.receiver.at('/replicas');
  const ids = received.map((request) => request.headers['x-webhook-delivery']);
  // No delivery attempted twice: as many requests as distinct deliveries.
  expect(new Set(ids).size).toBe(EVENTS);
  expect(received).toHaveLength(EVENTS);

  // Both replicas did part of the work, and together all of it.
  const [first, other] = await eventually(
    () => Promise.all([delivered(env.system.services.delivery!.metricsUrl), delivered(second.metricsUrl)]),
    ([a, b]) => a + b >= EVENTS,
    20_000,
    'both replicas to count their deliveries',
  );
  expect(first + other).toBe(EVENTS);
  expect(first).toBeGreaterThan(0);
  expect(other).toBeGreaterThan(0);

  // The delivery log agrees: every delivery succeeded on its first attempt.
  const log = await team.client.get(`/teams/${team.team_id}/webhooks/${webhook.id}/deliveries?limit=200`);
  expect(log.status).toBe(200);
  const deliveries = log.body.data as { status: string; attempt_count: number }[];
  expect(deliveries).toHaveLength(EVENTS);
  expect(deliveries.every((delivery) => delivery.status === 'succeeded' && delivery.attempt_count === 1)).toBe(true);
});
