// When an attempt ends, the sender claims again only if the slot it frees can start something
// that was held back: its team, its endpoint or the replica was at its budget, or the last claim
// took all it could. While one team waits at its budget, the attempts of another team (with
// nothing more due) therefore start no claims, and the waiting team's own freed slots are refilled
// at once; deliveries stored for a team at its budget wake nothing either. The poll interval is far
// longer than the test, so every claim counted was a wake-up.
import { SwitchableEndpoint } from './support/endpoint';
import { createIssue, createWebhook, eventually, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

jest.setTimeout(90_000);

const PER_TEAM = 2;

let env: DeliverySystem;
let hanging: SwitchableEndpoint;

beforeAll(async () => {
  env = await startDeliverySystem({
    delivery: {
      DELIVERY_CONCURRENCY_PER_TEAM: PER_TEAM,
      DELIVERY_POLL_INTERVAL_MS: 60_000,
      // The held attempts stay in flight until the endpoint lets them go.
      WEBHOOK_TIMEOUT_MS: 60_000,
      WEBHOOK_HEADERS_TIMEOUT_MS: 60_000,
      DELIVERY_LEASE_MS: 120_000,
    },
  });
  hanging = await SwitchableEndpoint.start(env.certificate, 'hanging');
}, 120_000);
afterAll(async () => {
  await hanging?.stop();
  await env?.stop();
});

const metrics = async () => (await fetch(`${env.system.services.delivery!.metricsUrl}/metrics`)).text();
/** Passes of the sender so far: one claim each (its poll never comes during this test). */
const senderPasses = async () => Number(/^worklane_worker_passes_total\{[^}]*worker="delivery sender"[^}]*\} (\d+)$/m.exec(await metrics())?.[1] ?? Number.NaN);
const ping = async (team: TestTeam, webhookId: number) => {
  const response = await team.client.post(`/teams/${team.team_id}/webhooks/${webhookId}/ping`);
  expect(response.status).toBe(201);
  return response.body as { id: string };
};
const statusesOf = async (team: TestTeam, webhookId: number) => {
  const response = await team.client.get(`/teams/${team.team_id}/webhooks/${webhookId}/deliveries`);
  expect(response.status).toBe(200);
  return (response.body.data as { status: string }[]).map((delivery) => delivery.status);
};

it("claims nothing for another team's finished attempts while a team waits at its budget, and refills that team's own slots at once", async () => {
  const [waiting, other] = await Promise.all([env.newTeam('At its budget'), env.newTeam('Other')]);
  const held = await createWebhook(waiting, { url: hanging.url('/held'), events: ['issue.created'] });
  // Four deliveries: two in flight (its whole budget), two due behind them.
  for (let count = 0; count < 4; count += 1) await ping(waiting, held.id);
  await eventually(
    async () => hanging.hanging,
    (requests) => requests === PER_TEAM,
    20_000,
    'the team to reach its budget',
  );

  // Its events are stored for a claim (no slot is free for them) and wake nothing: only a slot of
  // its own can let them go.
  const beforeEvents = await senderPasses();
  for (let count = 0; count < 3; count += 1) await createIssue(waiting, { title: `Waiting ${count}` });
  await eventually(
    async () => (await statusesOf(waiting, held.id)).length,
    (stored) => stored === 7,
    20_000,
    "the waiting team's events to be stored",
  );
  expect((await senderPasses()) - beforeEvents).toBe(0);

  const hook = await createWebhook(other, { url: env.receiver.url('/other'), events: ['issue.created'] });
  const before = await senderPasses();
  const pings = 8;
  for (let count = 0; count < pings; count += 1) {
    const sent = await ping(other, hook.id);
    await env.receiver.waitFor((requests) => requests.some((request) => request.headers['x-webhook-delivery'] === sent.id), 20_000, 'the ping');
  }
  // Each ping wakes the sender once (it is due at once, for a claim). Its attempt ending frees a
  // slot of a team with nothing due: no further claim (before, one more per attempt).
  await eventually(
    async () => (await statusesOf(other, hook.id)).filter((status) => status === 'succeeded').length,
    (succeeded) => succeeded === pings,
    20_000,
    'every ping recorded',
  );
  expect((await senderPasses()) - before).toBeLessThanOrEqual(pings + 1);
  expect(hanging.hanging).toBe(PER_TEAM);

  // The waiting team's attempts end (reset: they will be retried): its five due deliveries take the
  // slots as they free, by the claims the freed slots start, not at the poll a minute later.
  hanging.mode = 'ok';
  hanging.dropConnections();
  await eventually(
    () => statusesOf(waiting, held.id),
    (statuses) => statuses.filter((status) => status === 'succeeded').length >= 5,
    30_000,
    "the waiting team's due deliveries to be delivered",
  );
  expect(hanging.requests.length).toBeGreaterThanOrEqual(7);
});
