// Endpoint health and auto-disable, against the real stack: the health API's figures come from the
// attempts really made; a webhook whose every attempt fails gets webhook.failing after the notice
// period and is switched off after the disable period, both sent as ordinary signed deliveries to
// the team's webhooks that opted in; a success ends a streak; re-enabling sends nothing.
import type { ReceivedRequest } from './support/receiver';
import { signatureProblems } from './support/signatures';
import { createIssue, eventually, payloadOf, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

jest.setTimeout(90_000);

const NOTICE_AFTER_MS = 1_500;
const DISABLE_AFTER_MS = 4_000;
const SECRET = 'operational-events-secret';

let env: DeliverySystem;

beforeAll(async () => {
  env = await startDeliverySystem({
    retrySchedule: '0,1,1',
    delivery: {
      WEBHOOK_FAILING_NOTICE_AFTER_MS: NOTICE_AFTER_MS,
      WEBHOOK_DISABLE_AFTER_MS: DISABLE_AFTER_MS,
      WEBHOOK_HEALTH_CHECK_INTERVAL_MS: 200,
      DELIVERY_BREAKER_FAILURES: 2,
    },
  });
}, 120_000);
afterAll(() => env?.stop());

interface Health {
  webhook_id: number;
  computed_at: string;
  last_hour: { attempts: number; successes: number; failures: number; response_time_ms: { p50: number | null; p95: number | null } };
  last_day: { attempts: number; successes: number; failures: number; response_time_ms: { p50: number | null; p95: number | null } };
  circuit_breaker: { state: string; changed_at: string | null; retry_at: string | null };
  last_success_at: string | null;
  last_error: { at: string; status_code: number | null; message: string } | null;
  failing_since: string | null;
  failing_notice_sent_at: string | null;
  disable_at: string | null;
}

async function webhookOf(team: TestTeam, body: Record<string, unknown>): Promise<{ id: number }> {
  const response = await team.client.post(`/teams/${team.team_id}/webhooks`, body);
  if (response.status !== 201) throw new Error(`creating a webhook failed: ${response.status} ${response.text}`);
  return response.body;
}

async function healthOf(team: TestTeam, webhookId: number): Promise<Health> {
  const response = await team.client.get(`/teams/${team.team_id}/webhooks/${webhookId}/health`);
  if (response.status !== 200) throw new Error(`reading health failed: ${response.status} ${response.text}`);
  return response.body;
}

const eventOf = (request: ReceivedRequest) => request.headers['x-webhook-event'];
const operational = (requests: ReceivedRequest[]) => requests.filter((request) => eventOf(request)?.startsWith('webhook.'));

/** `worklane_worker_passes_total` of the auto-disable worker: it moves on once per look at failing webhooks. */
async function autoDisablePasses(): Promise<number> {
  const text = await (await fetch(`${env.system.services.delivery!.metricsUrl}/metrics`)).text();
  return Number(/worklane_worker_passes_total\{[^}]*worker="webhook auto-disable"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
}

describe('GET .../webhooks/{webhook}/health', () => {
  it('counts the attempts of the last hour and day with their response times, the breaker and the last error; another team gets 404', async () => {
    const team = await env.newTeam('Health');
    env.receiver.on('/health/ok', { status: 200, delayMs: 20 });
    env.receiver.on('/health/bad', { status: 500, body: 'broken' });
    const ok = await webhookOf(team, { url: env.receiver.url('/health/ok'), events: ['issue.created'] });
    const bad = await webhookOf(team, { url: env.receiver.url('/health/bad'), events: ['issue.created'] });

    const fresh = await healthOf(team, ok.id);
    expect(fresh).toMatchObject({
      webhook_id: ok.id,
      last_hour: { attempts: 0, successes: 0, failures: 0, response_time_ms: { p50: null, p95: null } },
      circuit_breaker: { state: 'closed', changed_at: null, retry_at: null },
      last_error: null,
      failing_since: null,
      disable_at: null,
    });

    for (let index = 0; index < 3; index += 1) await createIssue(team, { title: `Health ${index}` });
    const healthy = await eventually(
      () => healthOf(team, ok.id),
      (health) => health.last_hour.attempts === 3,
      20_000,
      'three attempts in the health of the healthy webhook',
    );
    expect(healthy.last_hour).toMatchObject({ attempts: 3, successes: 3, failures: 0 });
    expect(healthy.last_day).toMatchObject({ attempts: 3, successes: 3, failures: 0 });
    // The receiver waits 20 ms before answering: no answer came quicker.
    expect(healthy.last_hour.response_time_ms.p50).toBeGreaterThanOrEqual(15);
    expect(healthy.last_hour.response_time_ms.p95).toBeGreaterThanOrEqual(healthy.last_hour.response_time_ms.p50!);
    expect(healthy.last_success_at).not.toBeNull();
    expect(healthy).toMatchObject({ last_error: null, failing_since: null, disable_at: null, circuit_breaker: { state: 'closed' } });

    const failing = await eventually(
      () => healthOf(team, bad.id),
      (health) => health.last_hour.failures >= 2 && health.circuit_breaker.changed_at !== null,
      20_000,
      'failures and an opened breaker in the health of the failing webhook',
    );
    expect(failing.last_hour.successes).toBe(0);
    expect(failing.last_hour.attempts).toBe(failing.last_hour.failures);
    expect(['open', 'half_open']).toContain(failing.circuit_breaker.state);
    expect(failing.last_error).toMatchObject({ status_code: 500, message: 'HTTP 500' });
    // Answers with a 5xx are answers: they have response times.
    expect(failing.last_hour.response_time_ms.p50).not.toBeNull();
    expect(failing.last_success_at).toBeNull();
    expect(failing.failing_since).not.toBeNull();
    expect(Date.parse(failing.disable_at!) - Date.parse(failing.failing_since!)).toBe(DISABLE_AFTER_MS);

    const other = await env.newTeam('Health elsewhere');
    expect((await other.client.get(`/teams/${other.team_id}/webhooks/${ok.id}/health`)).status).toBe(404);
    expect((await team.client.get(`/teams/${team.team_id}/webhooks/999999999/health`)).status).toBe(404);
  });
});

describe('auto-disable', () => {
  it('sends webhook.failing once, then switches the webhook off with a reason and sends webhook.disabled, to the webhooks that opted in; re-enabling sends nothing', async () => {
    const team = await env.newTeam('Auto-disable');
    env.receiver.on('/auto/failing', { status: 503, body: 'down for maintenance' });
    const ops = await webhookOf(team, {
      url: env.receiver.url('/auto/ops'),
      events: ['issue.created'],
      secret: SECRET,
      operational_events: ['webhook.failing', 'webhook.disabled'],
    });
    await webhookOf(team, { url: env.receiver.url('/auto/quiet'), events: ['issue.created'] });
    const failing = await webhookOf(team, { url: env.receiver.url('/auto/failing'), events: ['issue.created'] });
    // Another team's webhook that opted in hears nothing of this team's webhooks.
    const stranger = await env.newTeam('Auto-disable stranger');
    await webhookOf(stranger, { url: env.receiver.url('/auto/stranger'), events: ['issue.created'], operational_events: ['webhook.failing', 'webhook.disabled'] });

    await createIssue(team, { title: 'The endpoint is down' });
    await env.receiver.waitFor(
      (requests) => operational(requests.filter((request) => request.path === '/auto/ops')).some((request) => eventOf(request) === 'webhook.disabled'),
      40_000,
      'webhook.disabled at the ops webhook',
    );

    const received = operational(env.receiver.at('/auto/ops'));
    expect(received.map(eventOf)).toEqual(['webhook.failing', 'webhook.disabled']);
    for (const request of received) expect(signatureProblems(request, SECRET)).toEqual([]);
    const [failingEvent, disabledEvent] = received.map(payloadOf);
    expect(failingEvent).toMatchObject({
      event: 'webhook.failing',
      team_id: team.team_id,
      webhook: { id: failing.id, url: env.receiver.url('/auto/failing'), events: ['issue.created'], active: true },
      failure: { last_success_at: null, last_error: { status_code: 503, message: 'HTTP 503' } },
    });
    expect(Date.parse(failingEvent.failure.disable_at) - Date.parse(failingEvent.failure.since)).toBe(DISABLE_AFTER_MS);
    expect(Date.parse(failingEvent.created_at) - Date.parse(failingEvent.failure.since)).toBeGreaterThanOrEqual(NOTICE_AFTER_MS);
    expect(disabledEvent).toMatchObject({
      event: 'webhook.disabled',
      team_id: team.team_id,
      webhook: { id: failing.id, active: false, disabled_reason: expect.stringContaining('failed') },
      failure: { since: failingEvent.failure.since, last_error: { status_code: 503 } },
    });
    expect(Date.parse(disabledEvent.created_at) - Date.parse(disabledEvent.failure.since)).toBeGreaterThanOrEqual(DISABLE_AFTER_MS);
    expect(disabledEvent.id).not.toBe(failingEvent.id);
    expect(operational(env.receiver.at('/auto/quiet'))).toEqual([]);
    expect(operational(env.receiver.at('/auto/stranger'))).toEqual([]);

    // The webhook is off, with the reason and time recorded for the team (API and console).
    const disabled = (await team.client.get(`/teams/${team.team_id}/webhooks/${failing.id}`)).body;
    expect(disabled).toMatchObject({ active: false, disabled_reason: disabledEvent.webhook.disabled_reason });
    expect(disabled.disabled_at).toEqual(expect.any(String));
    // The operational events are in the ops webhook's delivery log like any delivery. The receiver
    // has the request before its attempt is recorded, so the log is read until both are.
    const operationalLog = async () =>
      ((await team.client.get(`/teams/${team.team_id}/webhooks/${ops.id}/deliveries`)).body.data as { event: string; event_id: string; status: string }[])
        .filter((delivery) => delivery.event.startsWith('webhook.'))
        .map((delivery) => [delivery.event, delivery.event_id, delivery.status]);
    const log = await eventually(
      operationalLog,
      (entries) => entries.every(([, , status]) => status !== 'pending') && entries.length >= 2,
      20_000,
      'both operational deliveries recorded',
    );
    expect(log).toEqual(
      expect.arrayContaining([
        ['webhook.failing', failingEvent.id, 'succeeded'],
        ['webhook.disabled', disabledEvent.id, 'succeeded'],
      ]),
    );
    // Switching it off ended the streak.
    const afterwards = await healthOf(team, failing.id);
    expect(afterwards).toMatchObject({ failing_since: null, failing_notice_sent_at: null, disable_at: null, last_error: { status_code: 503 } });

    // The team fixes its endpoint and switches the webhook on again: no event says so.
    env.receiver.on('/auto/failing', { status: 204 });
    const enabled = await team.client.patch(`/teams/${team.team_id}/webhooks/${failing.id}`, { active: true });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ active: true, disabled_reason: null, disabled_at: null });
    const passes = await autoDisablePasses();
    await createIssue(team, { title: 'The endpoint is back' });
    await env.receiver.waitFor(
      (requests) => requests.filter((request) => request.path === '/auto/failing' && payloadOf(request).issue?.title === 'The endpoint is back').length === 1,
    );
    await eventually(autoDisablePasses, (count) => count >= passes + 3, 20_000, 'three more passes of the auto-disable worker');
    expect(operational(env.receiver.at('/auto/ops')).map(eventOf)).toEqual(['webhook.failing', 'webhook.disabled']);
    const recovered = await eventually(
      () => healthOf(team, failing.id),
      (health) => health.last_success_at !== null,
      20_000,
      'the success in the health of the re-enabled webhook',
    );
    expect(recovered.failing_since).toBeNull();
  });

  it('a successful attempt ends a failing streak', async () => {
    const team = await env.newTeam('Streak');
    env.receiver.on('/streak/flaky', (_request, index) => (index === 0 ? { status: 502 } : { status: 200 }));
    const flaky = await webhookOf(team, { url: env.receiver.url('/streak/flaky'), events: ['issue.created'] });
    await createIssue(team, { title: 'Fails once' });
    const health = await eventually(
      () => healthOf(team, flaky.id),
      (current) => current.last_success_at !== null,
      20_000,
      'the retry that succeeds',
    );
    expect(health.failing_since).toBeNull();
    expect(health.disable_at).toBeNull();
    expect(health.last_error).toMatchObject({ status_code: 502 });
    expect(Date.parse(health.last_error!.at)).toBeLessThan(Date.parse(health.last_success_at!));
    expect(health.last_hour).toMatchObject({ attempts: 2, successes: 1, failures: 1 });
  });
});
