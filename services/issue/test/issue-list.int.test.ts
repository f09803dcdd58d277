// The issue list pages by default (an extension list): newest first, keyset cursor, Link header
// on the gateway's public path; a response stays bounded however many and large the issues are.
import { api, bootstrapTeam, startNatsServer, startSystem, type ApiClient, type BootstrapResult, type NatsServer, type System } from '@worklane/testing';

const DEFAULT_LIMIT = 3;
const MAX_LIMIT = 4;
// The smallest page budget there is: three issues with 20,000-character descriptions fit, four do not.
const MAX_PAGE_BYTES = 65_536;

let nats: NatsServer;
let system: System;
let team: BootstrapResult;
let client: ApiClient;

beforeAll(async () => {
  nats = await startNatsServer();
  system = await startSystem({
    services: ['token', 'project', 'issue', 'gateway'],
    env: { NATS_URL: nats.url, LOG_LEVEL: 'warn' },
    serviceEnv: { issue: { LIST_DEFAULT_LIMIT: DEFAULT_LIMIT, LIST_MAX_LIMIT: MAX_LIMIT, LIST_MAX_PAGE_BYTES: MAX_PAGE_BYTES } },
  });
  team = await bootstrapTeam(system);
  client = api(system, team.token);
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

async function newProject(name: string): Promise<string> {
  const response = await client.post(`/teams/${team.team_id}/organizations/${team.organization_id}/projects`, { name });
  expect(response.status).toBe(201);
  return `/teams/${team.team_id}/organizations/${team.organization_id}/projects/${response.body.id}/issues`;
}

const nextLink = (headers: Record<string, string>) => /<([^>]*)>;\s*rel="next"/.exec(headers.link ?? '')?.[1];

it(`serves ${DEFAULT_LIMIT} issues per page by default, newest first, following next_cursor and Link to the end`, async () => {
  const path = await newProject('Paged');
  const ids: number[] = [];
  for (let i = 0; i < 7; i++) ids.push((await client.post(path, { title: `Issue ${i}`, description: 'x'.repeat(20_000) })).body.id);
  const sizes: number[] = [];
  const seen: number[] = [];
  let response = await client.get(path);
  for (;;) {
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'next_cursor']);
    sizes.push(response.body.data.length);
    seen.push(...response.body.data.map((issue: { id: number }) => issue.id));
    const link = nextLink(response.headers);
    if (response.body.next_cursor === null) {
      expect(link).toBeUndefined();
      break;
    }
    expect(link).toBe(`/api/v1${path}?limit=${DEFAULT_LIMIT}&cursor=${response.body.next_cursor}`);
    response = await client.get(`${system.gatewayUrl}${link}`);
  }
  expect(sizes).toEqual([3, 3, 1]);
  expect(seen).toEqual([...ids].reverse());
});

it('does not repeat or skip issues created between pages', async () => {
  const path = await newProject('Moving');
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) ids.push((await client.post(path, { title: `Issue ${i}` })).body.id);
  const first = await client.get(path, { query: { limit: 2 } });
  await client.post(path, { title: 'Arrived meanwhile' });
  const second = await client.get(path, { query: { limit: 2, cursor: first.body.next_cursor } });
  expect([...first.body.data, ...second.body.data].map((issue: { id: number }) => issue.id)).toEqual([...ids].reverse());
  expect(second.body.next_cursor).toBeNull();
});

it('refuses a limit outside 1..max and a malformed or foreign cursor with 422, never 500', async () => {
  const path = await newProject('Refusals');
  await client.post(path, { title: 'One' });
  for (const limit of ['0', String(MAX_LIMIT + 1), 'abc', '99999999999']) {
    const response = await client.get(path, { query: { limit } });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['limit']);
  }
  const foreign = Buffer.from(JSON.stringify({ v: 1, l: 'webhooks', k: 5 })).toString('base64url');
  const negative = Buffer.from(JSON.stringify({ v: 1, l: 'issues', k: -5 })).toString('base64url');
  const huge = Buffer.from(JSON.stringify({ v: 1, l: 'issues', k: 1e300 })).toString('base64url');
  for (const cursor of [foreign, negative, huge, '!!!', 'e30']) {
    const response = await client.get(path, { query: { cursor } });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['cursor']);
  }
});

it('stops a page of large issues at the byte budget, never below one issue, and goes on from there', async () => {
  const path = await newProject('Large');
  const ids: number[] = [];
  for (let i = 0; i < 5; i++) ids.push((await client.post(path, { title: `Large ${i}`, description: 'd'.repeat(20_000) })).body.id);
  const huge = (await client.post(path, { title: 'Huge', description: 'x'.repeat(32_768) })).body.id;
  const sizes: number[] = [];
  const seen: number[] = [];
  let response = await client.get(path, { query: { limit: MAX_LIMIT } });
  for (;;) {
    expect(response.status).toBe(200);
    expect(Buffer.byteLength(response.text)).toBeLessThan(MAX_PAGE_BYTES + 1_000);
    sizes.push(response.body.data.length);
    seen.push(...response.body.data.map((issue: { id: number }) => issue.id));
    if (response.body.next_cursor === null) break;
    response = await client.get(`${system.gatewayUrl}${nextLink(response.headers)}`);
  }
  expect(seen).toEqual([huge, ...[...ids].reverse()]);
  expect(sizes).toEqual([2, 3, 1]);
});
