// Recovery jobs against the real stack: after an outage of its endpoint, a webhook's failed events
// of a window are sent again once each with their own id, as a stored job whose progress is
// readable, bounded, idempotent, one at a time per webhook, and carried on after a restart.
import { createIssue, createWebhook, eventually, payloadOf, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

const MAX_EVENTS = 4;
const SECRET = 'recovery-signing-secret';

let env: DeliverySystem;
let team: TestTeam;
let otherTeam: TestTeam;

beforeAll(async () => {
  env = await startDeliverySystem({
    // One attempt: a delivery that fails once has failed.
    retrySchedule: '0',
    delivery: {
      DELIVERY_RECOVERY_MAX_EVENTS: MAX_EVENTS,
      // One re-send per step, two steps a second: a job of a few events runs long enough to be seen running.
      DELIVERY_RECOVERY_DEFAULT_PER_SECOND: 2,
      DELIVERY_RECOVERY_BATCH_SIZE: 1,
    },
  });
  team = await env.newTeam('Recovering team');
  otherTeam = await env.newTeam('Other team');
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

interface Delivery {
  id: string;
  event_id: string;
  status: string;
  created_at: string;
  redelivery_of: string | null;
  recovery_id: number | null;
}

const webhookPath = (webhookId: number) => `/teams/${team.team_id}/webhooks/${webhookId}`;

async function log(webhookId: number, query: Record<string, string> = {}): Promise<Delivery[]> {
  const response = await team.client.get(`${webhookPath(webhookId)}/deliveries`, { query: { limit: 100, ...query } });
  expect(response.status).toBe(200);
  return response.body.data;
}

/** A webhook whose endpoint failed every delivery of `count` new issues; its failed deliveries, oldest first. */
async function webhookWithFailures(path: string, count: number): Promise<{ webhookId: number; failed: Delivery[] }> {
  env.receiver.on(path, { status: 500, body: 'down' });
  const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created'], secret: SECRET });
  for (let i = 0; i < count; i++) await createIssue(team, { title: `${path} ${i}` });
  const failed = await eventually(
    () => log(webhook.id, { status: 'failed' }),
    (rows) => rows.length === count,
    30_000,
    `${count} failed deliveries`,
  );
  env.receiver.on(path, { status: 200, body: 'ok' });
  return { webhookId: webhook.id, failed: failed.reverse() };
}

const recover = (webhookId: number, body: Record<string, unknown>, headers?: Record<string, string>) =>
  team.client.post(`${webhookPath(webhookId)}/recover`, body, headers ? { headers } : {});

const readRecovery = async (webhookId: number, id: number) => {
  const response = await team.client.get(`${webhookPath(webhookId)}/recoveries/${id}`);
  expect(response.status).toBe(200);
  return response.body;
};

/** The job once it has gone through its window and every re-send it made is finished. */
const finished = (webhookId: number, id: number) =>
  eventually(
    () => readRecovery(webhookId, id),
    (job) => job.status !== 'queued' && job.status !== 'running' && job.done === job.queued,
    30_000,
    `recovery ${id} to finish`,
  );

/** Requests the receiver got at `path` carrying event `eventId`. */
const received = (path: string, eventId: string) => env.receiver.at(path).filter((request) => payloadOf(request).id === eventId);

it('re-sends every event that failed in the window once, with its own id and bytes, and skips those that reached the webhook', async () => {
  const path = '/recover/once';
  const { webhookId, failed } = await webhookWithFailures(path, 3);
  // The first event reaches the endpoint by hand before the recovery: it needs nothing.
  const manual = await team.client.post(`/teams/${team.team_id}/deliveries/${failed[0]!.id}/redeliver`);
  expect(manual.status).toBe(201);
  await eventually(
    () => log(webhookId, { event_id: failed[0]!.event_id, status: 'succeeded' }),
    (rows) => rows.length === 1,
  );

  const started = await recover(webhookId, { since: failed[0]!.created_at });
  expect(started.status).toBe(202);
  expect(started.headers.location).toBe(`/api/v1${webhookPath(webhookId)}/recoveries/${started.body.id}`);
  expect(started.body).toMatchObject({ webhook_id: webhookId, since: failed[0]!.created_at, found: 3, pace_per_second: 2, error: null, finished_at: null });
  expect(['queued', 'running']).toContain(started.body.status);

  const job = await finished(webhookId, started.body.id);
  expect(job).toMatchObject({ status: 'succeeded', found: 3, queued: 2, skipped: 1, done: 2, delivered: 2, failed: 0 });
  expect(job.finished_at).not.toBeNull();

  // The two others came again, each once, with the event's id and exactly the bytes that failed.
  for (const original of failed.slice(1)) {
    const copies = received(path, original.event_id);
    expect(copies).toHaveLength(2);
    expect(copies[1]!.body.equals(copies[0]!.body)).toBe(true);
    const deliveries = await log(webhookId, { event_id: original.event_id });
    const resent = deliveries.filter((delivery) => delivery.recovery_id === job.id);
    expect(resent).toHaveLength(1);
    expect(resent[0]).toMatchObject({ redelivery_of: original.id, status: 'succeeded', event_id: original.event_id });
    expect(copies[1]!.headers['x-webhook-delivery']).toBe(resent[0]!.id);
  }
  expect(received(path, failed[0]!.event_id)).toHaveLength(2);

  // Asking again for the window re-sends nothing: every event has reached the webhook.
  const again = await recover(webhookId, { since: failed[0]!.created_at });
  expect(again.status).toBe(202);
  expect(again.body.id).not.toBe(job.id);
  expect(await finished(webhookId, again.body.id)).toMatchObject({ status: 'succeeded', found: 3, queued: 0, skipped: 3 });
});

it('runs one job at a time per webhook: the same window answers the running job, another window is 409, and an Idempotency-Key replays', async () => {
  const { webhookId, failed } = await webhookWithFailures('/recover/one-at-a-time', MAX_EVENTS);
  const window = { since: failed[0]!.created_at };
  const first = await recover(webhookId, window, { 'Idempotency-Key': 'recover-one-at-a-time' });
  expect(first.status).toBe(202);

  const same = await recover(webhookId, window);
  expect(same.status).toBe(202);
  expect(same.body.id).toBe(first.body.id);
  const other = await recover(webhookId, { since: failed[1]!.created_at });
  expect(other.status).toBe(409);
  expect(other.body).toMatchObject({ code: 'recovery_in_progress' });
  expect(other.body.message).toContain(`Recovery ${first.body.id}`);

  const replayed = await recover(webhookId, window, { 'Idempotency-Key': 'recover-one-at-a-time' });
  expect(replayed.status).toBe(202);
  expect(replayed.headers['idempotent-replayed']).toBe('true');
  expect(replayed.body).toEqual(first.body);

  expect(await finished(webhookId, first.body.id)).toMatchObject({ status: 'succeeded', found: MAX_EVENTS, queued: MAX_EVENTS, delivered: MAX_EVENTS });
  // Finished, the webhook takes a new job for another window.
  const next = await recover(webhookId, { since: failed[1]!.created_at });
  expect(next.status).toBe(202);
  expect(next.body.id).not.toBe(first.body.id);
  await finished(webhookId, next.body.id);
});

it('refuses a window with more failed events than one job may send, a window that is empty or in the future, and an inactive or unknown webhook', async () => {
  const { webhookId, failed } = await webhookWithFailures('/recover/bounds', MAX_EVENTS + 1);
  const tooLarge = await recover(webhookId, { since: failed[0]!.created_at });
  expect(tooLarge.status).toBe(422);
  expect(tooLarge.body).toMatchObject({ code: 'recovery_too_large' });
  expect(tooLarge.body.message).toContain(`more than ${MAX_EVENTS} failed events`);
  // A shorter window fits.
  const shorter = await recover(webhookId, { since: failed[1]!.created_at });
  expect(shorter.status).toBe(202);
  expect(shorter.body.found).toBe(MAX_EVENTS);
  await finished(webhookId, shorter.body.id);

  const future = await recover(webhookId, { since: new Date(Date.now() + 3_600_000).toISOString() });
  expect(future.status).toBe(422);
  expect(Object.keys(future.body.errors)).toEqual(['since']);
  const backwards = await recover(webhookId, { since: failed[1]!.created_at, until: failed[0]!.created_at });
  expect(backwards.status).toBe(422);
  for (const body of [{}, { since: 'yesterday' }, { since: failed[0]!.created_at, until: 12 }]) {
    const response = await recover(webhookId, body);
    expect(response.status).toBe(422);
    expect(response.body.code).toBe('validation_failed');
  }

  const inactive = await createWebhook(team, { url: env.receiver.url('/recover/inactive'), events: ['issue.created'], active: false });
  const refused = await recover(inactive.id, { since: failed[0]!.created_at });
  expect(refused.status).toBe(409);
  expect(refused.body.code).toBe('webhook_inactive');
  expect((await recover(999_999_999, { since: failed[0]!.created_at })).status).toBe(404);

  // A job is read through its own webhook and team only.
  expect((await team.client.get(`${webhookPath(inactive.id)}/recoveries/${shorter.body.id}`)).status).toBe(404);
  expect((await team.client.get(`${webhookPath(webhookId)}/recoveries/999999999`)).status).toBe(404);
  const foreign = await otherTeam.client.get(`/teams/${otherTeam.team_id}/webhooks/${webhookId}/recoveries/${shorter.body.id}`);
  expect(foreign.status).toBe(404);
  expect((await otherTeam.client.post(`/teams/${otherTeam.team_id}/webhooks/${webhookId}/recover`, { since: failed[0]!.created_at })).status).toBe(404);
});

it('carries a job on after the delivery service is killed, re-sending each event once', async () => {
  const path = '/recover/restart';
  const { webhookId, failed } = await webhookWithFailures(path, MAX_EVENTS);
  const started = await recover(webhookId, { since: failed[0]!.created_at });
  expect(started.status).toBe(202);
  // Killed once the job is under way, before it can have gone through its window.
  await env.receiver.waitFor(() => failed.some((original) => received(path, original.event_id).length >= 2), 20_000, 'the first re-send');
  const delivery = env.system.services.delivery!;
  await delivery.kill();
  await delivery.restart();

  const job = await finished(webhookId, started.body.id);
  expect(job).toMatchObject({ status: 'succeeded', found: MAX_EVENTS, queued: MAX_EVENTS, skipped: 0, delivered: MAX_EVENTS });
  for (const original of failed) {
    const resent = (await log(webhookId, { event_id: original.event_id })).filter((row) => row.recovery_id === job.id);
    expect(resent).toHaveLength(1);
    expect(received(path, original.event_id).length).toBeGreaterThanOrEqual(2);
  }
});

it('fails a job whose webhook is deactivated while it runs, with the reason', async () => {
  const { webhookId, failed } = await webhookWithFailures('/recover/deactivated', MAX_EVENTS);
  const started = await recover(webhookId, { since: failed[0]!.created_at });
  expect(started.status).toBe(202);
  const patched = await team.client.patch(webhookPath(webhookId), { active: false });
  expect(patched.status).toBe(200);
  const job = await finished(webhookId, started.body.id);
  // It may have re-sent some before it saw the change; it stops there.
  expect(job.status).toBe('failed');
  expect(job.error).toContain('deactivated');
});
