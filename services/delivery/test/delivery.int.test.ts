// Signed webhook delivery end to end: issues created and changed through the gateway reach a real
// HTTPS receiver through the outbox, JetStream and the delivery service, exactly as docs/webhooks.md
// describes.
import { randomBytes } from 'node:crypto';
import { DnsResponder } from './support/dns';
import { OtlpSink } from './support/otlp';
import { signatureProblems } from './support/signatures';
import { issuesPath, createIssue, createWebhook, eventually, payloadOf, startDeliverySystem, updateIssue, type DeliverySystem, type TestTeam } from './support/system';

const SECRET = 'a-very-secret-signing-key';
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

// Names only the test's DNS server knows; WEBHOOK_DNS_SERVERS points the services at it.
const PINNED_HOST = 'pinned.worklane.test';
const REBOUND_HOST = 'rebound.worklane.test';

let env: DeliverySystem;
let dns: DnsResponder;
let otlp: OtlpSink;
let team: TestTeam;
let otherTeam: TestTeam;

beforeAll(async () => {
  [dns, otlp] = await Promise.all([DnsResponder.start(), OtlpSink.start()]);
  env = await startDeliverySystem({
    env: { WEBHOOK_DNS_SERVERS: dns.server, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint },
    certificateNames: [PINNED_HOST],
  });
  [team, otherTeam] = await Promise.all([env.newTeam('Delivery team'), env.newTeam('Other team')]);
}, 120_000);
afterAll(async () => {
  await env?.stop();
  await Promise.all([dns?.stop(), otlp?.stop()]);
});

const deliveriesOf = async (owner: TestTeam, webhookId: number) => {
  const response = await owner.client.get(`/teams/${owner.team_id}/webhooks/${webhookId}/deliveries`);
  expect(response.status).toBe(200);
  return response.body.data as { id: string; event: string; status: string; attempt_count: number; failure_reason: string | null }[];
};
const deliveryDetail = async (owner: TestTeam, deliveryId: string) => {
  const response = await owner.client.get(`/teams/${owner.team_id}/deliveries/${deliveryId}`);
  expect(response.status).toBe(200);
  return response.body;
};
const forIssue = (issueId: number, event: string) => (request: { body: Buffer }) => {
  const payload = payloadOf(request);
  return payload.event === event && payload.issue.id === issueId;
};

describe('events reach subscribed webhooks, signed', () => {
  it('delivers issue.created and issue.updated only to active webhooks of the team subscribed to them', async () => {
    const { receiver } = env;
    const both = await createWebhook(team, { url: receiver.url('/both'), events: ['issue.created', 'issue.updated'], secret: SECRET });
    const updatesOnly = await createWebhook(team, { url: receiver.url('/updates'), events: ['issue.updated'], secret: SECRET });
    const unsigned = await createWebhook(team, { url: receiver.url('/unsigned'), events: ['issue.created'] });
    const inactive = await createWebhook(team, { url: receiver.url('/inactive'), events: ['issue.created', 'issue.updated'], secret: SECRET, active: false });
    const foreign = await createWebhook(otherTeam, { url: receiver.url('/foreign'), events: ['issue.created', 'issue.updated'], secret: SECRET });

    const issue = await createIssue(team, { title: 'Checkout fails', priority: 'high' });
    await receiver.waitFor(() => receiver.at('/both').some(forIssue(issue.id, 'issue.created')) && receiver.at('/unsigned').some(forIssue(issue.id, 'issue.created')));
    await updateIssue(team, issue.id, { status: 'in_progress', title: 'Checkout fails on Safari' });
    await receiver.waitFor(() => receiver.at('/both').some(forIssue(issue.id, 'issue.updated')) && receiver.at('/updates').some(forIssue(issue.id, 'issue.updated')));

    const created = receiver.at('/both').find(forIssue(issue.id, 'issue.created'))!;
    expect(created.method).toBe('POST');
    expect(created.headers['content-type']).toBe('application/json');
    expect(created.headers['user-agent']).toMatch(/^Worklane-Webhooks\/\d+\.\d+\.\d+$/);
    expect(created.headers['x-webhook-event']).toBe('issue.created');
    expect(created.headers['x-webhook-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.headers['webhook-id']).toBe(created.headers['x-webhook-delivery']);
    expect(signatureProblems(created, SECRET)).toEqual([]);
    expect(signatureProblems(created, 'not-the-secret-at-all')).not.toEqual([]);

    const body = payloadOf(created);
    expect(Object.keys(body)).toEqual(['id', 'event', 'created_at', 'team_id', 'issue']);
    expect(body).toMatchObject({
      event: 'issue.created',
      team_id: team.team_id,
      issue: { id: issue.id, title: 'Checkout fails', priority: 'high', reference_code: 'BACKENDAPI-1' },
    });
    expect(body.created_at).toMatch(TIMESTAMP);

    const updated = receiver.at('/updates').find(forIssue(issue.id, 'issue.updated'))!;
    expect(signatureProblems(updated, SECRET)).toEqual([]);
    expect(payloadOf(updated).changes).toEqual({
      title: { from: 'Checkout fails', to: 'Checkout fails on Safari' },
      status: { from: 'triage', to: 'in_progress' },
    });

    const unsignedRequest = receiver.at('/unsigned').find(forIssue(issue.id, 'issue.created'))!;
    for (const header of ['x-webhook-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) expect(unsignedRequest.headers[header]).toBeUndefined();
    expect(unsignedRequest.headers['x-webhook-delivery']).toBeDefined();

    // One delivery per (event, webhook), and nothing for the webhooks that must not get it.
    expect(receiver.at('/both').filter((request) => payloadOf(request).issue.id === issue.id)).toHaveLength(2);
    expect(receiver.at('/updates').filter(forIssue(issue.id, 'issue.created'))).toHaveLength(0);
    expect(receiver.at('/unsigned').filter(forIssue(issue.id, 'issue.updated'))).toHaveLength(0);
    expect(receiver.at('/inactive')).toHaveLength(0);
    expect(receiver.at('/foreign')).toHaveLength(0);
    expect(await deliveriesOf(team, inactive.id)).toEqual([]);
    expect(await deliveriesOf(otherTeam, foreign.id)).toEqual([]);
    expect((await deliveriesOf(team, both.id)).map((delivery) => delivery.status)).toEqual(['succeeded', 'succeeded']);
    expect(await deliveriesOf(team, unsigned.id)).toHaveLength(1);
    expect(await deliveriesOf(team, updatesOnly.id)).toHaveLength(1);
  });

  it('fires issue.updated only when a field changed, carrying exactly the changed fields', async () => {
    const { receiver } = env;
    await createWebhook(team, { url: receiver.url('/changes'), events: ['issue.updated'], secret: SECRET });
    const issue = await createIssue(team, { title: 'Same', status: 'todo' });
    const unchanged = await updateIssue(team, issue.id, { title: 'Same', status: 'todo' });
    expect(unchanged.updated_at).toBe(issue.updated_at);
    await updateIssue(team, issue.id, { estimated_date: '2026-03-01', status: 'todo' });
    await receiver.waitFor(() => receiver.at('/changes').some(forIssue(issue.id, 'issue.updated')));
    const updates = receiver.at('/changes').filter(forIssue(issue.id, 'issue.updated'));
    expect(updates).toHaveLength(1);
    expect(payloadOf(updates[0]!).changes).toEqual({ estimated_date: { from: null, to: '2026-03-01' } });
  });

  it('sends nothing to a webhook once the call deactivating or deleting it has returned', async () => {
    const { receiver } = env;
    const control = await createWebhook(team, { url: receiver.url('/control'), events: ['issue.created'], secret: SECRET });
    const deactivated = await createWebhook(team, { url: receiver.url('/deactivated'), events: ['issue.created'], secret: SECRET });
    const deleted = await createWebhook(team, { url: receiver.url('/deleted'), events: ['issue.created'], secret: SECRET });
    expect((await team.client.patch(`/teams/${team.team_id}/webhooks/${deactivated.id}`, { active: false })).status).toBe(200);
    expect((await team.client.delete(`/teams/${team.team_id}/webhooks/${deleted.id}`)).status).toBe(204);

    const issue = await createIssue(team, { title: 'After the change' });
    await receiver.waitFor(() => receiver.at('/control').some(forIssue(issue.id, 'issue.created')));
    expect(receiver.at('/deactivated')).toHaveLength(0);
    expect(receiver.at('/deleted')).toHaveLength(0);
    expect(await deliveriesOf(team, control.id)).toHaveLength(1);
  });

  it('abandons pending retries of a webhook deleted after its first attempt failed', async () => {
    const { receiver } = env;
    receiver.on('/dies', { status: 500 });
    const webhook = await createWebhook(team, { url: receiver.url('/dies'), events: ['issue.created'], secret: SECRET });
    const issue = await createIssue(team, { title: 'Doomed' });
    await receiver.waitFor(() => receiver.at('/dies').length >= 1);
    const [delivery] = await deliveriesOf(team, webhook.id);
    expect((await team.client.delete(`/teams/${team.team_id}/webhooks/${webhook.id}`)).status).toBe(204);
    const sentBefore = receiver.at('/dies').length;

    const final = await eventually(
      () => deliveryDetail(team, delivery!.id),
      (detail) => detail.status === 'failed',
      20_000,
      'the delivery to fail',
    );
    expect(final.failure_reason).toBe('webhook_deleted');
    expect(receiver.at('/dies')).toHaveLength(sentBefore);
    expect(payloadOf(receiver.at('/dies')[0]!).issue.id).toBe(issue.id);
  });
});

describe('tracing', () => {
  it('runs one trace from the API call through the outbox relay and NATS to the outbound POST', async () => {
    const { receiver } = env;
    await createWebhook(team, { url: receiver.url('/traced'), events: ['issue.created'] });
    const traceId = randomBytes(16).toString('hex');
    const response = await team.client.post(issuesPath(team), { title: 'Traced' }, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
    expect(response.status).toBe(201);
    await receiver.waitFor(() => receiver.at('/traced').length === 1);
    expect(receiver.at('/traced')[0]!.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    // Spans are exported in batches, every few seconds, by each service on its own schedule.
    const spans = await eventually(
      async () => otlp.inTrace(traceId),
      (found) =>
        ['delivery', 'gateway', 'issue'].every((service) => found.some((span) => span.service === service)) &&
        ['issues.created publish', 'issues.created process', 'webhook issue.created attempt'].every((name) => found.some((span) => span.name === name)) &&
        found.filter((span) => span.name === 'webhook issue.created attempt').length === found.filter((span) => span.service === 'delivery' && span.name === 'POST').length,
      20_000,
      'the spans of the trace',
    );
    const services = new Set(spans.map((span) => span.service));
    expect([...services].sort()).toEqual(expect.arrayContaining(['delivery', 'gateway', 'issue']));
    // Every webhook of the team subscribed to issue.created gets an attempt, each with its own POST.
    const attempts = spans.filter((span) => span.name === 'webhook issue.created attempt');
    const posts = spans.filter((span) => span.service === 'delivery' && span.name === 'POST');
    expect(posts.map((span) => span.parentSpanId).sort()).toEqual(attempts.map((span) => span.spanId).sort());
  });
});

describe('retries', () => {
  it('retries a failing receiver on the schedule with the same bytes, then marks the delivery failed', async () => {
    const { receiver } = env;
    receiver.on('/broken', { status: 500, body: 'database is on fire' });
    const webhook = await createWebhook(team, { url: receiver.url('/broken'), events: ['issue.created'], secret: SECRET });
    await createIssue(team, { title: 'Retried' });

    const [delivery] = await eventually(
      () => deliveriesOf(team, webhook.id),
      (list) => list[0]?.status === 'failed',
      30_000,
      'the schedule to run out',
    );
    expect(delivery).toMatchObject({ status: 'failed', failure_reason: 'exhausted', attempt_count: 3 });
    const sent = receiver.at('/broken');
    expect(sent).toHaveLength(3);
    for (const request of sent) {
      expect(request.body.equals(sent[0]!.body)).toBe(true);
      expect(request.headers['x-webhook-delivery']).toBe(delivery!.id);
      expect(signatureProblems(request, SECRET)).toEqual([]);
    }

    const detail = await deliveryDetail(team, delivery!.id);
    expect(detail.attempts).toHaveLength(3);
    expect(detail.attempts.map((attempt: { number: number }) => attempt.number)).toEqual([1, 2, 3]);
    for (const attempt of detail.attempts) {
      expect(attempt).toMatchObject({ status_code: 500, error: null, response_body: 'database is on fire', url: webhook.url });
      expect(attempt.attempted_at).toMatch(TIMESTAMP);
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(detail.next_attempt_at).toBeNull();
    expect(detail.completed_at).toMatch(TIMESTAMP);
  });

  it('counts a timeout as a failed attempt and succeeds once the receiver answers in time', async () => {
    const { receiver } = env;
    receiver.on('/slow', (_request, index) => (index === 0 ? { status: 200, delayMs: 4_000 } : { status: 204 }));
    const webhook = await createWebhook(team, { url: receiver.url('/slow'), events: ['issue.created'] });
    await createIssue(team, { title: 'Slow receiver' });
    const [delivery] = await eventually(
      () => deliveriesOf(team, webhook.id),
      (list) => list[0]?.status === 'succeeded',
      30_000,
      'the retry to succeed',
    );
    const detail = await deliveryDetail(team, delivery!.id);
    expect(detail.attempts).toHaveLength(2);
    expect(detail.attempts[0]).toMatchObject({ status_code: null, response_body: null });
    expect(detail.attempts[0].error).toMatch(/timeout/);
    expect(detail.attempts[1]).toMatchObject({ status_code: 204, error: null });
  });

  it('stops at 410 Gone', async () => {
    const { receiver } = env;
    receiver.on('/gone', { status: 410 });
    const webhook = await createWebhook(team, { url: receiver.url('/gone'), events: ['issue.created'] });
    await createIssue(team, { title: 'Nobody home' });
    const [delivery] = await eventually(
      () => deliveriesOf(team, webhook.id),
      (list) => list[0]?.status === 'failed',
      20_000,
      'the delivery to fail',
    );
    expect(delivery).toMatchObject({ failure_reason: 'gone', attempt_count: 1 });
    expect(receiver.at('/gone')).toHaveLength(1);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const { receiver } = env;
    receiver.on('/moved', { status: 302, headers: { location: receiver.url('/new-home') } });
    const webhook = await createWebhook(team, { url: receiver.url('/moved'), events: ['issue.created'] });
    await createIssue(team, { title: 'Redirected' });
    const [delivery] = await eventually(
      () => deliveriesOf(team, webhook.id),
      (list) => list[0]?.status === 'failed',
      30_000,
      'the delivery to fail',
    );
    expect(delivery!.attempt_count).toBe(3);
    expect(receiver.at('/new-home')).toHaveLength(0);
    const detail = await deliveryDetail(team, delivery!.id);
    expect(detail.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([302, 302, 302]);
  });
});

describe('the address check of every attempt', () => {
  it('connects to the address it checked, with the host name kept for SNI and Host', async () => {
    dns.set(PINNED_HOST, '127.0.0.1');
    const webhook = await createWebhook(team, { url: env.receiver.url('/pinned', PINNED_HOST), events: ['issue.created'] });
    const issue = await createIssue(team, { title: 'Pinned' });
    await env.receiver.waitFor(() => env.receiver.at('/pinned').some(forIssue(issue.id, 'issue.created')));
    // The system resolver knows nothing of the name, so the connection went to the checked address;
    // TLS verified the certificate for the name (SNI) and Host still carries it.
    expect(env.receiver.at('/pinned')[0]!.headers.host).toBe(new URL(webhook.url).host);
  });

  it('refuses a host that resolved publicly when the webhook was saved but resolves to a non-public address now', async () => {
    dns.set(REBOUND_HOST, '93.184.215.14');
    const webhook = await createWebhook(team, { url: `https://${REBOUND_HOST}/hook`, events: ['issue.created'] });
    dns.set(REBOUND_HOST, '169.254.169.254');
    await createIssue(team, { title: 'Rebound' });
    const [delivery] = await eventually(
      () => deliveriesOf(team, webhook.id),
      (list) => (list[0]?.attempt_count ?? 0) >= 1,
      20_000,
      'an attempt',
    );
    const detail = await deliveryDetail(team, delivery!.id);
    expect(detail.attempts[0]).toMatchObject({
      status_code: null,
      error: 'address not allowed: the host resolves to a non-public address',
      response_body: null,
    });
    // The resolved address is not shown to the webhook's owner.
    expect(JSON.stringify(detail)).not.toContain('169.254');
  });
});

describe('the delivery log API', () => {
  it('lists deliveries newest first, shows one with its attempts, redelivers it and pings', async () => {
    const { receiver } = env;
    const webhook = await createWebhook(team, { url: receiver.url('/log'), events: ['issue.created'], secret: SECRET });
    const first = await createIssue(team, { title: 'First' });
    await receiver.waitFor(() => receiver.at('/log').some(forIssue(first.id, 'issue.created')));
    const second = await createIssue(team, { title: 'Second' });
    await receiver.waitFor(() => receiver.at('/log').some(forIssue(second.id, 'issue.created')));

    const list = await eventually(
      () => deliveriesOf(team, webhook.id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === 'succeeded'),
    );
    expect(Object.keys(list[0]!).sort()).toEqual(
      [
        'attempt_count',
        'completed_at',
        'created_at',
        'event',
        'event_id',
        'failure_reason',
        'id',
        'issue_id',
        'next_attempt_at',
        'out_of_order',
        'recovery_id',
        'redelivery_of',
        'status',
        'updated_at',
        'webhook_id',
      ].sort(),
    );
    // Each delivery names its event's issue, and none had to go ahead of an earlier one.
    expect(list.map((row) => (row as unknown as { issue_id: number; out_of_order: boolean }).issue_id)).toEqual([second.id, first.id]);
    expect(list.every((row) => (row as unknown as { out_of_order: boolean }).out_of_order === false)).toBe(true);
    const detailOfNewest = await deliveryDetail(team, list[0]!.id);
    expect(detailOfNewest.payload.issue.id).toBe(second.id);
    expect(detailOfNewest.attempts).toEqual([expect.objectContaining({ number: 1, status_code: 200, error: null, response_body: 'ok', url: webhook.url })]);

    const original = receiver.at('/log').find(forIssue(first.id, 'issue.created'))!;
    const redelivered = await team.client.post(`/teams/${team.team_id}/deliveries/${list[1]!.id}/redeliver`);
    expect(redelivered.status).toBe(201);
    expect(redelivered.body).toMatchObject({ redelivery_of: list[1]!.id, status: 'pending', event: 'issue.created', webhook_id: webhook.id });
    await receiver.waitFor(() => receiver.at('/log').some((request) => request.headers['x-webhook-delivery'] === redelivered.body.id));
    const again = receiver.at('/log').find((request) => request.headers['x-webhook-delivery'] === redelivered.body.id)!;
    expect(again.body.equals(original.body)).toBe(true);
    expect(signatureProblems(again, SECRET)).toEqual([]);

    const ping = await team.client.post(`/teams/${team.team_id}/webhooks/${webhook.id}/ping`);
    expect(ping.status).toBe(201);
    expect(ping.body).toMatchObject({ event: 'ping', webhook_id: webhook.id, status: 'pending' });
    await receiver.waitFor(() => receiver.at('/log').some((request) => request.headers['x-webhook-delivery'] === ping.body.id));
    const pinged = receiver.at('/log').find((request) => request.headers['x-webhook-delivery'] === ping.body.id)!;
    expect(pinged.headers['x-webhook-event']).toBe('ping');
    expect(signatureProblems(pinged, SECRET)).toEqual([]);
    expect(payloadOf(pinged)).toMatchObject({ event: 'ping', team_id: team.team_id, webhook: { id: webhook.id, url: webhook.url } });

    expect((await deliveriesOf(team, webhook.id)).map((delivery) => delivery.event)).toEqual(['ping', 'issue.created', 'issue.created', 'issue.created']);
  });

  it('keeps every team to its own deliveries and answers unknown ids with 404', async () => {
    const webhook = await createWebhook(team, { url: env.receiver.url('/private'), events: ['issue.created'] });
    await createIssue(team, { title: 'Private' });
    const [delivery] = await eventually(
      () => deliveriesOf(team, webhook.id),
      (list) => list.length === 1,
    );
    const other = otherTeam.client;
    expect((await other.get(`/teams/${team.team_id}/deliveries/${delivery!.id}`)).status).toBe(403);
    expect((await other.get(`/teams/${otherTeam.team_id}/deliveries/${delivery!.id}`)).status).toBe(404);
    expect((await other.post(`/teams/${otherTeam.team_id}/deliveries/${delivery!.id}/redeliver`)).status).toBe(404);
    expect((await other.get(`/teams/${otherTeam.team_id}/webhooks/${webhook.id}/deliveries`)).status).toBe(404);
    expect((await other.post(`/teams/${otherTeam.team_id}/webhooks/${webhook.id}/ping`)).status).toBe(404);
    expect((await team.client.get(`/teams/${team.team_id}/deliveries/not-a-delivery-id`)).body).toEqual({ message: 'Not found.', code: 'not_found' });
    expect((await team.client.get(`/teams/${team.team_id}/deliveries/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });

  it('refuses to ping or redeliver to an inactive webhook', async () => {
    const webhook = await createWebhook(team, { url: env.receiver.url('/paused'), events: ['issue.created'], active: false });
    const response = await team.client.post(`/teams/${team.team_id}/webhooks/${webhook.id}/ping`);
    expect(response.status).toBe(409);
    expect(response.body.message).toMatch(/inactive/);
  });
});

describe('metrics', () => {
  it('exposes deliveries by outcome, attempt latency, lag, retries, consumer pending and outbox backlog', async () => {
    const metricsOf = async (url: string) => (await fetch(`${url}/metrics`)).text();
    const delivery = await metricsOf(env.system.services.delivery!.metricsUrl);
    expect(delivery).toMatch(/^worklane_webhook_deliveries_total\{[^}]*outcome="succeeded"[^}]*\} [1-9]\d*$/m);
    expect(delivery).toMatch(/^worklane_webhook_deliveries_total\{[^}]*outcome="exhausted"[^}]*\} [1-9]\d*$/m);
    expect(delivery).toMatch(/^worklane_webhook_attempt_duration_seconds_count\{[^}]*result="5xx"[^}]*\} [1-9]\d*$/m);
    expect(delivery).toMatch(/^worklane_webhook_delivery_lag_seconds_count(\{[^}]*\})? [1-9]\d*$/m);
    expect(delivery).toMatch(/^worklane_webhook_retries_scheduled_total(\{[^}]*\})? [1-9]\d*$/m);
    expect(delivery).toMatch(/^worklane_delivery_consumer_pending(\{[^}]*\})? \d+$/m);
    expect(await metricsOf(env.system.services.issue!.metricsUrl)).toMatch(/^worklane_outbox_backlog(\{[^}]*\})? \d+$/m);
  });
});
