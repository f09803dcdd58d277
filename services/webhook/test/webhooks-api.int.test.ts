// The webhook routes of the README's API table, through the gateway against the real
// token, project and webhook services, with tokens made by the CLI's bootstrap.
import { api, bootstrapTeam, startSystem, type ApiClient, type BootstrapResult, type System } from '@worklane/testing';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const WEBHOOK_FIELDS = [
  'active',
  'created_at',
  'description',
  'disabled_at',
  'disabled_reason',
  'ed25519_public_key',
  'events',
  'filters',
  'id',
  'operational_events',
  'rate_limit_per_second',
  'secret_rotated_at',
  'team_id',
  'updated_at',
  'url',
];
const SECRET = 'whsec_through-the-gateway-0123';
// A public address literal needs no DNS; 127.0.0.2 and fd00:feed::/32 are let through by the
// system's WEBHOOK_ALLOWED_CIDRS, while the rest of loopback and ULA stay refused.
const PUBLIC_URL = 'https://8.8.8.8/hooks/worklane';
const ALLOWED_CIDRS = '127.0.0.2/32,fd00:feed::/32';

let system: System;
let mine: BootstrapResult;
let theirs: BootstrapResult;
let client: ApiClient;
let theirClient: ApiClient;

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'gateway', 'project', 'webhook'], serviceEnv: { webhook: { WEBHOOK_ALLOWED_CIDRS: ALLOWED_CIDRS } } });
  [mine, theirs] = await Promise.all([bootstrapTeam(system), bootstrapTeam(system)]);
  client = api(system, mine.token);
  theirClient = api(system, theirs.token);
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

const webhooks = (team = mine) => `/teams/${team.team_id}/webhooks`;

async function createWebhook(body: Record<string, unknown> = {}, caller = client, team = mine) {
  const response = await caller.post(webhooks(team), { url: PUBLIC_URL, events: ['issue.created'], ...body });
  expect(response.status).toBe(201);
  return response.body;
}

describe('4.5 create a webhook', () => {
  it('returns 201 with the bare Webhook, active true by default, and never the secret', async () => {
    const response = await client.post(webhooks(), { url: PUBLIC_URL, events: ['issue.created', 'issue.updated'], secret: SECRET });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(WEBHOOK_FIELDS);
    expect(response.body).toMatchObject({ team_id: mine.team_id, url: PUBLIC_URL, events: ['issue.created', 'issue.updated'], active: true });
    expect(response.body.created_at).toMatch(TIMESTAMP);
    expect(response.body.updated_at).toMatch(TIMESTAMP);
    expect(response.text).not.toContain(SECRET);
  });

  it('keeps active false when sent and ignores server-owned fields', async () => {
    const webhook = await createWebhook({ active: false, id: 1, team_id: theirs.team_id, created_at: '2000-01-01T00:00:00.000000Z' });
    expect(webhook).toMatchObject({ active: false, team_id: mine.team_id });
    expect(webhook.created_at.startsWith('2000')).toBe(false);
  });

  it('answers 422 with per-field errors', async () => {
    const response = await client.post(webhooks(), { url: 'http://8.8.8.8/', events: [], secret: 'too-short', active: 'true' });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: 'The url field must be an absolute https:// URL.',
      code: 'validation_failed',
      errors: {
        url: ['The url field must be an absolute https:// URL.'],
        events: ['The events field must have at least 1 item.'],
        secret: ['The secret field must be at least 16 characters.'],
        active: ['The active field must be true or false.'],
      },
    });
  });

  it('refuses unknown and duplicate events', async () => {
    const unknown = await client.post(webhooks(), { url: PUBLIC_URL, events: ['issue.created', 'project.created'] });
    expect(unknown.body.errors).toEqual({ 'events.1': ['The selected events is invalid.'] });
    const duplicate = await client.post(webhooks(), { url: PUBLIC_URL, events: ['issue.updated', 'issue.updated'] });
    expect(duplicate.body.errors).toEqual({ 'events.1': ['The events.1 field has a duplicate value.'] });
  });

  it.each([
    ['http://8.8.8.8/hook', 'The url field must be an absolute https:// URL.'],
    ['https://user:secret@8.8.8.8/hook', 'The url field must not contain credentials.'],
    ['https://no-such-receiver.invalid/hook', 'The url field host could not be resolved.'],
  ])('refuses %s', async (url, message) => {
    const response = await client.post(webhooks(), { url, events: ['issue.created'] });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ url: [message] });
  });

  it.each([
    'https://localhost/hook',
    'https://127.0.0.1/hook',
    'https://10.0.0.8/hook',
    'https://192.168.1.20/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:169.254.169.254]/hook',
    'https://[fd00:beef::1]/hook',
  ])('refuses %s, a non-public address', async (url) => {
    const response = await client.post(webhooks(), { url, events: ['issue.created'] });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['url']);
    expect(response.body.errors.url[0]).toMatch(/public address/);
  });

  it.each(['https://127.0.0.2:9443/hook', 'https://[::ffff:127.0.0.2]/hook', 'https://[fd00:feed::7]/hook'])('accepts %s, inside WEBHOOK_ALLOWED_CIDRS', async (url) => {
    expect((await createWebhook({ url })).url).toBe(url);
  });
});

describe('4.4 list webhooks', () => {
  it('returns {"data": [...]} with all of the team\'s webhooks, newest first, without secrets', async () => {
    await createWebhook({ secret: SECRET });
    await createWebhook({}, theirClient, theirs);
    const newest = await createWebhook({ events: ['issue.updated'] });
    const response = await client.get(webhooks());
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(response.body.data[0]).toEqual(newest);
    const ids = response.body.data.map((webhook: { id: number }) => webhook.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    for (const webhook of response.body.data) {
      expect(Object.keys(webhook).sort()).toEqual(WEBHOOK_FIELDS);
      expect(webhook.team_id).toBe(mine.team_id);
    }
    expect(response.text).not.toContain(SECRET);
  });
});

describe('4.6 delete a webhook', () => {
  it('answers 204 with no body, and the webhook is gone', async () => {
    const webhook = await createWebhook();
    const response = await client.delete(`${webhooks()}/${webhook.id}`);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect((await client.get(`${webhooks()}/${webhook.id}`)).status).toBe(404);
    expect((await client.delete(`${webhooks()}/${webhook.id}`)).status).toBe(404);
    expect((await client.get(webhooks())).body.data.map((w: { id: number }) => w.id)).not.toContain(webhook.id);
  });
});

describe('single webhook GET and PATCH', () => {
  it('reads and updates url, events, secret and active', async () => {
    const webhook = await createWebhook({ secret: SECRET });
    const path = `${webhooks()}/${webhook.id}`;
    expect((await client.get(path)).body).toEqual(webhook);
    const response = await client.patch(path, { url: 'https://1.1.1.1/new', events: ['issue.updated', 'issue.created'], secret: null, active: false });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ url: 'https://1.1.1.1/new', events: ['issue.updated', 'issue.created'], active: false });
    expect(Object.keys(response.body).sort()).toEqual(WEBHOOK_FIELDS);
    const refused = await client.patch(path, { url: 'https://127.0.0.1/' });
    expect(refused.status).toBe(422);
    expect((await client.get(path)).body).toEqual(response.body);
  });
});

describe('cross-team access', () => {
  it("answers 403 for another team's path on every route and verb", async () => {
    const theirWebhook = await createWebhook({ secret: SECRET }, theirClient, theirs);
    const path = `${webhooks(theirs)}/${theirWebhook.id}`;
    for (const response of await Promise.all([
      client.get(webhooks(theirs)),
      client.post(webhooks(theirs), { url: PUBLIC_URL, events: ['issue.created'] }),
      client.get(path),
      client.patch(path, { active: false }),
      client.delete(path),
    ])) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ message: 'This action is unauthorized.', code: 'forbidden' });
    }
    expect((await theirClient.get(path)).body).toEqual(theirWebhook);
  });

  it("answers 404 for another team's webhook id under one's own path, changing nothing", async () => {
    const theirWebhook = await createWebhook({}, theirClient, theirs);
    const path = `${webhooks()}/${theirWebhook.id}`;
    for (const response of [await client.get(path), await client.patch(path, { url: 'https://1.1.1.1/stolen' }), await client.delete(path)]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'Not found.', code: 'not_found' });
    }
    expect((await theirClient.get(`${webhooks(theirs)}/${theirWebhook.id}`)).body).toEqual(theirWebhook);
  });
});

describe('HTTP edge cases', () => {
  it('answers 401 without a token, 404 for malformed ids and 405 with Allow', async () => {
    expect((await api(system).get(webhooks())).status).toBe(401);
    expect((await client.get(`${webhooks()}/abc`)).status).toBe(404);
    const put = await client.put(webhooks(), { url: PUBLIC_URL });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, POST, HEAD');
  });
});
