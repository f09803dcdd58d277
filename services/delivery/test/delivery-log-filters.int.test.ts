// The delivery log as a team searches it: filters by state, event type, issue, event id and
// creation time that combine and page like the whole log, and each attempt with the request it
// sent and the answer it got (bounded, no credential kept).
import { createIssue, createWebhook, eventually, payloadOf, startDeliverySystem, updateIssue, type DeliverySystem, type TestTeam } from './support/system';

const SECRET = 'log-filters-signing-secret';
const EXCERPT_BYTES = 256;
const HEADERS_MAX_BYTES = 512;

let env: DeliverySystem;
let team: TestTeam;

beforeAll(async () => {
  env = await startDeliverySystem({
    // A first attempt and one retry, at once.
    retrySchedule: '0,0',
    delivery: { DELIVERY_RESPONSE_EXCERPT_BYTES: EXCERPT_BYTES, DELIVERY_EXCHANGE_HEADERS_MAX_BYTES: HEADERS_MAX_BYTES },
  });
  team = await env.newTeam('Log team');
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

interface Delivery {
  id: string;
  event: string;
  event_id: string;
  status: string;
  created_at: string;
}

const logPath = (webhookId: number) => `/teams/${team.team_id}/webhooks/${webhookId}/deliveries`;
const nextLink = (headers: Record<string, string>) => /<([^>]*)>;\s*rel="next"/.exec(headers.link ?? '')?.[1];

/** Every delivery the filtered log lists, page after page, newest first. */
async function search(webhookId: number, query: Record<string, string | number>): Promise<Delivery[]> {
  const rows: Delivery[] = [];
  let response = await team.client.get(logPath(webhookId), { query: { limit: 1, ...query } });
  for (;;) {
    expect(response.status).toBe(200);
    rows.push(...response.body.data);
    const link = nextLink(response.headers);
    if (!link) return rows;
    // The next page keeps the filters.
    for (const [name, value] of Object.entries(query)) expect(new URL(link, 'http://x').searchParams.get(name)).toBe(String(value));
    response = await team.client.get(`${env.system.gatewayUrl}${link}`);
  }
}

const ids = (rows: { id: string }[]) => rows.map((row) => row.id);

it('filters by state, event type, event id and creation time, combined and paged', async () => {
  const path = '/log/filters';
  const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created', 'issue.updated'], secret: SECRET });
  // The receiver refuses every event of the issue called Broken.
  env.receiver.on(path, (request) => (payloadOf(request).issue?.title === 'Broken' ? { status: 500 } : { status: 200 }));
  const healthy = await createIssue(team, { title: 'Healthy' });
  await createIssue(team, { title: 'Broken' });
  await updateIssue(team, healthy.id, { description: 'Renamed nothing, described it' });
  const ping = await team.client.post(`/teams/${team.team_id}/webhooks/${webhook.id}/ping`);
  expect(ping.status).toBe(201);

  const all = await eventually(
    () => search(webhook.id, {}),
    (rows) => rows.length === 4 && rows.every((row) => row.status !== 'pending'),
    30_000,
    'four finished deliveries',
  );
  const one = (test: (row: Delivery) => boolean) => all.filter(test) as [Delivery];
  const [pinged] = one((row) => row.event === 'ping');
  const [updated] = one((row) => row.event === 'issue.updated');
  const [failed] = one((row) => row.event === 'issue.created' && row.status === 'failed');
  const [created] = one((row) => row.event === 'issue.created' && row.status === 'succeeded');
  /** The log's rows that pass `test`, in the log's order. */
  const expected = (test: (row: Delivery) => boolean) => ids(all.filter(test));

  expect(ids(await search(webhook.id, { status: 'failed' }))).toEqual([failed.id]);
  expect(ids(await search(webhook.id, { status: 'succeeded' }))).toEqual(expected((row) => row.id !== failed.id));
  expect(ids(await search(webhook.id, { event: 'issue.created' }))).toEqual(expected((row) => row.event === 'issue.created'));
  expect(ids(await search(webhook.id, { event: 'ping' }))).toEqual([pinged.id]);
  expect(ids(await search(webhook.id, { event: 'issue.updated' }))).toEqual([updated.id]);
  expect(ids(await search(webhook.id, { event_id: failed.event_id.toUpperCase() }))).toEqual([failed.id]);
  expect(ids(await search(webhook.id, { created_after: failed.created_at }))).toEqual(expected((row) => row.created_at >= failed.created_at));
  expect(ids(await search(webhook.id, { created_before: failed.created_at }))).toEqual(expected((row) => row.created_at < failed.created_at));
  expect(ids(await search(webhook.id, { created_after: created.created_at, created_before: pinged.created_at, event: 'issue.created' }))).toEqual(
    expected((row) => row.event === 'issue.created' && row.created_at >= created.created_at && row.created_at < pinged.created_at),
  );
  // Times with an offset name the same instant.
  const shifted = new Date(Date.parse(failed.created_at) + 2 * 3_600_000).toISOString();
  const offset = `${shifted.slice(0, 19)}${failed.created_at.slice(19, 26)}+02:00`;
  expect(ids(await search(webhook.id, { created_before: offset }))).toEqual(expected((row) => row.created_at < failed.created_at));
});

it('finds the deliveries of one issue', async () => {
  const path = '/log/issues';
  env.receiver.on(path, (request) => (payloadOf(request).issue?.title === 'Refused' ? { status: 500 } : { status: 200 }));
  const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created', 'issue.updated'] });
  const kept = await createIssue(team, { title: 'Kept' });
  const refused = await createIssue(team, { title: 'Refused' });
  await updateIssue(team, kept.id, { description: 'Changed' });
  const all = await eventually(
    () => search(webhook.id, {}),
    (rows) => rows.length === 3 && rows.every((row) => row.status !== 'pending'),
    30_000,
    'three finished deliveries',
  );
  const failed = all.filter((row) => row.status === 'failed');
  expect(failed).toHaveLength(1);
  expect(ids(await search(webhook.id, { issue_id: kept.id }))).toEqual(ids(all.filter((row) => row.status === 'succeeded')));
  expect(ids(await search(webhook.id, { issue_id: refused.id }))).toEqual(ids(failed));
  expect(ids(await search(webhook.id, { issue_id: refused.id, status: 'succeeded' }))).toEqual([]);
});

it('refuses a filter it cannot read with a 422 naming it', async () => {
  const webhook = await createWebhook(team, { url: env.receiver.url('/log/invalid'), events: ['issue.created'] });
  const cases: [string, string][] = [
    ['status', 'lost'],
    ['event', 'issue.deleted'],
    ['event_id', 'not-a-uuid'],
    ['issue_id', 'first'],
    ['created_after', 'yesterday'],
    ['created_before', '2026-13-01T00:00:00Z'],
  ];
  for (const [name, value] of cases) {
    const response = await team.client.get(logPath(webhook.id), { query: { [name]: value } });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual([name]);
  }
  expect((await team.client.get(`${logPath(webhook.id)}?status=failed&status=succeeded`)).status).toBe(422);
});

it('shows each attempt with the headers and body it sent and the status, headers and first bytes it got, never a credential', async () => {
  const path = '/log/exchange';
  const filler = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`X-Filler-${i}`, 'f'.repeat(40)]));
  env.receiver.on(path, {
    status: 503,
    headers: { 'Set-Cookie': 'session=receiver-cookie-value', 'X-Auth-Token': 'receiver-token-value', 'X-Trace': 'kept', ...filler },
    body: 'E'.repeat(EXCERPT_BYTES * 4),
  });
  const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created'], secret: SECRET });
  await createIssue(team, { title: 'Watched' });
  const [delivery] = await eventually(
    () => search(webhook.id, { status: 'failed' }),
    (rows) => rows.length === 1,
    30_000,
    'the failed delivery',
  );
  const detail = (await team.client.get(`/teams/${team.team_id}/deliveries/${delivery!.id}`)).body;
  const requests = env.receiver.at(path);
  expect(detail.attempts).toHaveLength(2);
  expect(requests).toHaveLength(2);

  for (const [index, attempt] of (detail.attempts as Record<string, any>[]).entries()) {
    const sent = requests[index]!;
    // What the receiver got is what the log says was sent: headers (each attempt signs anew) and body.
    expect(attempt.request_headers['X-Webhook-Delivery']).toBe(delivery!.id);
    expect(attempt.request_headers['Content-Type']).toBe('application/json');
    for (const name of ['X-Webhook-Signature', 'webhook-signature', 'webhook-timestamp', 'webhook-id'])
      expect(attempt.request_headers[name]).toBe(sent.headers[name.toLowerCase()]);
    expect(detail.request_body).toBe(sent.body.toString('utf8'));

    expect(attempt.status_code).toBe(503);
    expect(attempt.response_body).toBe('E'.repeat(EXCERPT_BYTES));
    expect(attempt.response_headers['x-trace']).toBe('kept');
    expect(attempt.response_headers['set-cookie']).toBe('[redacted]');
    expect(attempt.response_headers['x-auth-token']).toBe('[redacted]');
    // The receiver's headers are kept up to the bound; the rest are counted.
    expect(attempt.response_headers['[omitted]']).toMatch(/^\d+ more headers? past the 512-byte bound$/);
    const kept = Object.entries(attempt.response_headers as Record<string, string>).filter(([name]) => name !== '[omitted]');
    expect(kept.reduce((bytes, [name, value]) => bytes + Buffer.byteLength(name) + Buffer.byteLength(value), 0)).toBeLessThanOrEqual(HEADERS_MAX_BYTES);
  }
  const text = JSON.stringify(detail);
  for (const credential of [SECRET, 'receiver-cookie-value', 'receiver-token-value']) expect(text).not.toContain(credential);
});
