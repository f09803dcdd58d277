// Bad input at the public edge, through a real gateway in front of every service: bodies that are
// not JSON, text that cannot be stored, fields over their documented lengths, huge invalid
// arrays and bad query parameters all get a small, clear 4xx, never a 500.
import { api, bootstrapTeam, startSystem, type BootstrapResult, type System } from '@worklane/testing';

jest.setTimeout(120_000);

let system: System;
let team: BootstrapResult;
let projectId: number;
let issueId: number;
let webhookId: number;

const base = () => `/teams/${team.team_id}`;
const projects = () => `${base()}/organizations/${team.organization_id}/projects`;
const issues = () => `${projects()}/${projectId}/issues`;
const client = () => api(system, team.token);

beforeAll(async () => {
  system = await startSystem({ env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' } });
  team = await bootstrapTeam(system);
  const project = await client().post(projects(), { name: 'Edge' });
  expect(project.status).toBe(201);
  projectId = project.body.id;
  const issue = await client().post(issues(), { title: 'First' });
  expect(issue.status).toBe(201);
  issueId = issue.body.id;
  const webhook = await client().post(`${base()}/webhooks`, { url: 'https://127.0.0.1:9/hook', events: ['issue.created'] });
  expect(webhook.status).toBe(201);
  webhookId = webhook.body.id;
});

afterAll(async () => {
  await system?.stop();
});

/** Every route of the API that takes a body, with a valid body for it. */
const bodyRoutes = (): [string, string, Record<string, unknown>][] => [
  ['POST', `${base()}/organizations`, { name: 'Org' }],
  ['POST', projects(), { name: 'P' }],
  ['PATCH', `${projects()}/${projectId}`, { name: 'P' }],
  ['POST', issues(), { title: 'T' }],
  ['PATCH', `${issues()}/${issueId}`, { title: 'T' }],
  ['POST', `${base()}/webhooks`, { url: 'https://127.0.0.1:9/x', events: ['issue.created'] }],
  ['PATCH', `${base()}/webhooks/${webhookId}`, { active: false }],
  ['POST', `${base()}/webhooks/${webhookId}/ping`, {}],
  ['POST', `${base()}/deliveries/nope/redeliver`, {}],
];

describe('bodies that are not JSON', () => {
  it('answers 415 with the JSON error shape on every route that takes a body', async () => {
    for (const [method, path] of bodyRoutes()) {
      const plain = await client().request(method, path, '{"name":"x"}', { raw: true, headers: { 'content-type': 'text/plain' } });
      expect([method, path, plain.status]).toEqual([method, path, 415]);
      expect(plain.body).toEqual({ message: 'The request body must be JSON (Content-Type: application/json).', code: 'unsupported_media_type' });
    }
  });

  it('answers 415 for a body sent without a content type', async () => {
    const response = await client().post(projects(), '{"name":"x"}', { raw: true, headers: { 'content-type': '' } });
    expect(response.status).toBe(415);
  });

  it('answers 413 for a body over 1 MiB however it is sent', async () => {
    const response = await client().post(issues(), { title: 'x', description: '\u0001'.repeat(200_000) });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ message: 'The request body is too large.', code: 'payload_too_large' });
  });
});

describe('U+0000', () => {
  it('is a 422 naming the field on every route that takes a body, at any depth', async () => {
    for (const [method, path, body] of bodyRoutes()) {
      const response = await client().request(method, path, { ...body, nested: { list: ['ok', 'a\u0000b'] } });
      expect([method, path, response.status]).toEqual([method, path, 422]);
      expect(response.body.errors).toEqual({ 'nested.list.1': ['The nested.list.1 field must not contain the NUL character (U+0000).'] });
    }
  });

  it('is a 422 in a known text field, and nothing is stored', async () => {
    const before = await client().get(`${issues()}/${issueId}`);
    const response = await client().patch(`${issues()}/${issueId}`, { title: 'new', description: 'one\u0000two' });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: 'The description field must not contain the NUL character (U+0000).',
      code: 'validation_failed',
      errors: { description: ['The description field must not contain the NUL character (U+0000).'] },
    });
    expect((await client().get(`${issues()}/${issueId}`)).body).toEqual(before.body);
  });

  it('is a 422 in a query parameter', async () => {
    const response = await client().get(issues(), { query: { cursor: 'a\u0000' } });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['cursor']);
  });
});

describe('text fields over their documented length', () => {
  it.each([
    ['organization name', () => `${base()}/organizations`, { name: 'x'.repeat(256) }, 'name'],
    ['project name', () => projects(), { name: 'x'.repeat(256) }, 'name'],
    ['project description', () => projects(), { name: 'P', description: 'x'.repeat(10_001) }, 'description'],
    ['issue title', () => issues(), { title: 'x'.repeat(256) }, 'title'],
    ['issue description', () => issues(), { title: 'T', description: 'x'.repeat(32_769) }, 'description'],
    ['issue url', () => issues(), { title: 'T', url: `https://example.com/${'x'.repeat(2_030)}` }, 'url'],
    ['webhook url', () => `${base()}/webhooks`, { url: `https://127.0.0.1/${'x'.repeat(2_040)}`, events: ['issue.created'] }, 'url'],
    ['webhook secret', () => `${base()}/webhooks`, { url: 'https://127.0.0.1/x', events: ['issue.created'], secret: 's'.repeat(256) }, 'secret'],
  ])('refuses an over-long %s with 422 naming the field', async (_name, path, body, field) => {
    const response = await client().post(path(), body);
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual([field]);
  });

  it('accepts an issue whose every text is at its limit and made of the costliest characters', async () => {
    const worst = { title: '\u0001'.repeat(255), description: '\u0001'.repeat(32_768) };
    const created = await client().post(issues(), worst);
    expect(created.status).toBe(201);
    const updated = await client().patch(`${issues()}/${created.body.id}`, { title: '\u001f'.repeat(255), description: '\u001f'.repeat(32_768) });
    expect(updated.status).toBe(200);
    expect(updated.body.description).toHaveLength(32_768);
  });
});

describe('a huge invalid body', () => {
  it('gets a small 422: at most 20 field errors and a count of the rest', async () => {
    const invalid = Array.from({ length: 100_000 }, (_, index) => index);
    const body = JSON.stringify({ url: 'https://127.0.0.1/x', events: invalid, extra: Array.from({ length: 50_000 }, () => '\u0000') });
    expect(body.length).toBeGreaterThan(400_000);
    const response = await client().post(`${base()}/webhooks`, body, { raw: true });
    expect(response.status).toBe(422);
    expect(response.text.length).toBeLessThan(16 * 1024);
    expect(Object.keys(response.body.errors).length).toBeLessThanOrEqual(20);
    expect(response.body.errors_omitted).toBeGreaterThan(0);
  });

  it('gets one error for an over-long events array, whatever its items', async () => {
    const events = Array.from({ length: 50_000 }, () => 'issue.created');
    const response = await client().post(`${base()}/webhooks`, { url: 'https://127.0.0.1/x', events });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ events: ['The events field must not have more than 2 items.'] });
  });
});

describe('query parameters', () => {
  it('answers 422 for an over-long value, naming it, on the lists', async () => {
    for (const path of [projects(), issues(), `${base()}/webhooks`, `${base()}/organizations`, `${base()}/webhooks/${webhookId}/deliveries`]) {
      const response = await client().get(path, { query: { cursor: 'c'.repeat(2_000) } });
      expect([path, response.status]).toEqual([path, 422]);
      expect(Object.keys(response.body.errors)).toEqual(['cursor']);
    }
  });

  it('never answers a malformed escape with a 500', async () => {
    for (const query of ['?limit=%zz', '?cursor=%E0%A4%A', '?limit=1&limit=2', '?limit=-1', '?limit=1e9']) {
      const response = await client().get(`${issues()}${query}`);
      expect([query, response.status < 500]).toEqual([query, true]);
    }
  });
});
