// The fast path in the running system: a delivery that may go at once is sent by the replica that
// fanned its event out, with no claim; a team at its budget and a rate-limited endpoint wait for the
// claim as before; and a replica killed in the middle of such an attempt leaves the delivery to
// another replica, which claims it once the lease runs out. Outcomes are read from the receiver, the delivery log and each
// replica's metrics.
import type { ServiceHandle } from '@worklane/testing';
import { createIssue, createWebhook, eventually, startDeliverySystem, type DeliverySystem } from './support/system';

jest.setTimeout(120_000);

let env: DeliverySystem;
let replacement: ServiceHandle | undefined;

beforeAll(async () => {
  env = await startDeliverySystem({
    delivery: {
      // One attempt in flight per team: the second delivery of a team whose first is in flight must wait.
      DELIVERY_CONCURRENCY_PER_TEAM: 1,
      // A held answer stays within the attempt's time, which stays within the lease (5 s).
      WEBHOOK_TIMEOUT_MS: 4_000,
      WEBHOOK_HEADERS_TIMEOUT_MS: 4_000,
    },
  });
}, 120_000);
afterAll(async () => {
  await replacement?.stop();
  await env?.stop();
});

/** Attempts a replica has started, by path (at_once: from the fan-out; claim). */
async function started(metricsUrl: string): Promise<{ atOnce: number; claim: number }> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const count = (path: string) => Number(new RegExp(`^worklane_delivery_attempts_started_total\\{[^}]*path="${path}"[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { atOnce: count('at_once'), claim: count('claim') };
}

const deliveryIdsAt = (path: string) => env.receiver.at(path).map((request) => request.headers['x-webhook-delivery']);

it('sends a delivery at once when its team has room, and leaves the next of a team at its budget to the claim', async () => {
  const team = await env.newTeam('Fast team');
  const path = '/fast/budget';
  // The first request is answered only once the second event's delivery is stored.
  let answerFirst: () => void = () => {};
  const firstHeld = new Promise<void>((resolve) => {
    answerFirst = resolve;
  });
  env.receiver.on(path, (_request, index) => (index === 0 ? { status: 200, body: 'ok', until: firstHeld } : { status: 200, body: 'ok' }));
  const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created'], secret: 'fast-path-secret' });
  const metricsUrl = env.system.services.delivery!.metricsUrl;
  const before = await started(metricsUrl);
  const logOf = async () => (await team.client.get(`/teams/${team.team_id}/webhooks/${webhook.id}/deliveries`)).body.data as { status: string; attempt_count: number }[];

  try {
    await createIssue(team, { title: 'First' });
    await env.receiver.waitFor(() => env.receiver.at(path).length >= 1, 20_000, 'the first delivery');
    await createIssue(team, { title: 'Second' });
    await eventually(logOf, (rows) => rows.length === 2, 20_000, 'the second delivery to be stored');
  } finally {
    answerFirst();
  }
  await env.receiver.waitFor(() => new Set(deliveryIdsAt(path)).size >= 2, 20_000, 'both deliveries');

  const after = await started(metricsUrl);
  expect(after.atOnce - before.atOnce).toBe(1);
  expect(after.claim - before.claim).toBe(1);
  expect(env.receiver.at(path)).toHaveLength(2);
  const log = await eventually(logOf, (rows) => rows.every((row) => row.status !== 'pending'), 20_000, 'both deliveries to be recorded');
  expect(log.map((delivery) => [delivery.status, delivery.attempt_count])).toEqual([
    ['succeeded', 1],
    ['succeeded', 1],
  ]);
});

it('leaves the delivery of a rate-limited endpoint to the claim, which spends the limit for every replica', async () => {
  const team = await env.newTeam('Limited team');
  const path = '/fast/limited';
  const created = await team.client.post(`/teams/${team.team_id}/webhooks`, {
    url: env.receiver.url(path),
    events: ['issue.created'],
    secret: 'fast-path-secret',
    rate_limit_per_second: 5,
  });
  expect(created.status).toBe(201);
  const metricsUrl = env.system.services.delivery!.metricsUrl;
  const before = await started(metricsUrl);

  await createIssue(team, { title: 'To a limited endpoint' });
  await env.receiver.waitFor(() => env.receiver.at(path).length >= 1, 20_000, 'the limited delivery');

  const after = await started(metricsUrl);
  expect(after.atOnce - before.atOnce).toBe(0);
  expect(after.claim - before.claim).toBe(1);
});

it('delivers a delivery sent at once by a replica killed mid-attempt through another replica once its lease runs out', async () => {
  const team = await env.newTeam('Killed replica team');
  const path = '/fast/killed';
  // The first attempt gets no answer before its replica is killed; the next one is answered.
  env.receiver.on(path, (_request, index) => (index === 0 ? { status: 200, body: 'late', delayMs: 60_000 } : { status: 200, body: 'ok' }));
  const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created'], secret: 'fast-path-secret' });
  const doomed = env.system.services.delivery!;
  const before = await started(doomed.metricsUrl);

  await createIssue(team, { title: 'Sent at once, then its sender dies' });
  await env.receiver.waitFor(() => env.receiver.at(path).length >= 1, 20_000, 'the first attempt');
  expect((await started(doomed.metricsUrl)).atOnce - before.atOnce).toBe(1);
  await doomed.kill();

  replacement = await env.system.startService('delivery', env.deliveryEnv);
  await env.receiver.waitFor(() => env.receiver.at(path).length >= 2, 30_000, 'the delivery through the other replica');
  const [first, second] = deliveryIdsAt(path);
  expect(second).toBe(first);
  expect((await started(replacement.metricsUrl)).claim).toBeGreaterThanOrEqual(1);

  // Logged once: the killed replica never recorded its attempt; the other replica's is attempt 1.
  // (The gateway reaches the delivery log through the first replica's address: start it again.)
  await doomed.restart();
  const log = await eventually(
    async () => (await team.client.get(`/teams/${team.team_id}/webhooks/${webhook.id}/deliveries`)).body.data as { id: string; status: string; attempt_count: number }[],
    (rows) => rows?.[0]?.status === 'succeeded',
    20_000,
    'the delivery to be recorded',
  );
  expect(log).toEqual([expect.objectContaining({ id: first, status: 'succeeded', attempt_count: 1 })]);
});
