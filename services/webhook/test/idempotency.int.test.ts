// Idempotency-Key on creating a webhook through the gateway: the retry gets the first answer and
// its Location, and the team holds one webhook.
import { randomUUID } from 'node:crypto';
import { createPool } from '@worklane/db';
import { api, bootstrapTeam, startSystem, type ApiClient, type BootstrapResult, type System } from '@worklane/testing';

const PUBLIC_URL = 'https://8.8.8.8/hooks/idempotent';

let system: System;
let team: BootstrapResult;
let client: ApiClient;

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'gateway', 'project', 'webhook'] });
  team = await bootstrapTeam(system);
  client = api(system, team.token);
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

it('creates a webhook once for a key and replays the answer, Location included', async () => {
  const key = randomUUID();
  const path = `/teams/${team.team_id}/webhooks`;
  const body = { url: PUBLIC_URL, events: ['issue.created'], secret: 'whsec_idempotent-0123456789' };
  const responses = await Promise.all([client.post(path, body, { headers: { 'Idempotency-Key': key } }), client.post(path, body, { headers: { 'Idempotency-Key': key } })]);
  const original = responses.find((response) => response.status === 201 && response.headers['idempotent-replayed'] === undefined)!;
  expect(original).toBeDefined();
  const retry = await client.post(path, body, { headers: { 'Idempotency-Key': key } });
  expect(retry.status).toBe(201);
  expect(retry.headers['idempotent-replayed']).toBe('true');
  expect(retry.headers.location).toBe(`/api/v1/teams/${team.team_id}/webhooks/${original.body.id}`);
  expect(retry.text).toBe(original.text);
  expect(retry.text).not.toContain('whsec_');
  const list = await client.get(path);
  expect(list.body.data.filter((webhook: { url: string }) => webhook.url === PUBLIC_URL)).toHaveLength(1);
});

it('replays a secret rotation with the same new secret and rotates once, keeping the answer encrypted', async () => {
  const created = await client.post(`/teams/${team.team_id}/webhooks`, { url: PUBLIC_URL, events: ['issue.created'], secret: 'whsec_before-rotation-0123' });
  const path = `/teams/${team.team_id}/webhooks/${created.body.id}/secret/rotate`;
  const key = randomUUID();
  const first = await client.post(path, { overlap_seconds: 60 }, { headers: { 'Idempotency-Key': key } });
  const second = await client.post(path, { overlap_seconds: 60 }, { headers: { 'Idempotency-Key': key } });
  expect([first.status, second.status]).toEqual([200, 200]);
  expect(second.headers['idempotent-replayed']).toBe('true');
  expect(second.headers['cache-control']).toBe('no-store');
  expect(second.body).toEqual(first.body);
  const db = createPool({ url: system.databaseUrl, schema: 'webhook', max: 1 });
  try {
    // Rotated once: the secret before the rotation is the only old one still signing.
    const previous = await db.query('SELECT count(*)::int AS n FROM webhook_previous_secrets WHERE webhook_id = $1', [created.body.id]);
    expect(previous.rows[0].n).toBe(1);
    // The kept answer is stored sealed: the new secret is nowhere in clear.
    const kept = await db.query<{ response_body: string }>("SELECT response_body FROM idempotency_keys WHERE operation LIKE '%/secret/rotate'");
    expect(kept.rows).toHaveLength(1);
    expect(kept.rows[0]!.response_body).not.toContain(first.body.secret);
  } finally {
    await db.end();
  }
});
