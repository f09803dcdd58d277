// The webhook list (whole by default, paged on request) and the per-team webhook quota, through
// the gateway against the real token and webhook services.
import { api, bootstrapTeam, startSystem, type ApiClient, type BootstrapResult, type System } from '@worklane/testing';

const PUBLIC_URL = 'https://8.8.8.8/hooks/worklane';
const MAX_LIMIT = 4;
const MAX_WEBHOOKS = 7;

let system: System;

beforeAll(async () => {
  system = await startSystem({
    services: ['token', 'gateway', 'project', 'webhook'],
    serviceEnv: { webhook: { LIST_DEFAULT_LIMIT: 2, LIST_MAX_LIMIT: MAX_LIMIT, TEAM_MAX_WEBHOOKS: MAX_WEBHOOKS } },
  });
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

async function newTeam(): Promise<{ team: BootstrapResult; client: ApiClient; path: string }> {
  const team = await bootstrapTeam(system);
  return { team, client: api(system, team.token), path: `/teams/${team.team_id}/webhooks` };
}

const create = (client: ApiClient, path: string) => client.post(path, { url: PUBLIC_URL, events: ['issue.created'] });

const nextLink = (headers: Record<string, string>) => /<([^>]*)>;\s*rel="next"/.exec(headers.link ?? '')?.[1];

describe('4.4 list webhooks with paging', () => {
  it('returns the whole set under data alone without limit, newest first', async () => {
    const { client, path } = await newTeam();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(client, path)).body.id);
    const response = await client.get(path);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(response.body.data.map((webhook: { id: number }) => webhook.id)).toEqual([...ids].reverse());
    expect(response.headers.link).toBeUndefined();
  });

  it('pages newest first with ?limit=, next_cursor and a Link header on the public path', async () => {
    const { team, client, path } = await newTeam();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(client, path)).body.id);
    const seen: number[] = [];
    let response = await client.get(path, { query: { limit: 2 } });
    const sizes: number[] = [];
    for (;;) {
      expect(response.status).toBe(200);
      sizes.push(response.body.data.length);
      seen.push(...response.body.data.map((webhook: { id: number }) => webhook.id));
      const link = nextLink(response.headers);
      if (response.body.next_cursor === null) {
        expect(link).toBeUndefined();
        break;
      }
      expect(link).toBe(`/api/v1/teams/${team.team_id}/webhooks?limit=2&cursor=${response.body.next_cursor}`);
      response = await client.get(`${system.gatewayUrl}${link}`);
    }
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual([...ids].reverse());
  });

  it('pages with the default size when only a cursor is given, and refuses a limit over the maximum', async () => {
    const { client, path } = await newTeam();
    for (let i = 0; i < 4; i++) await create(client, path);
    const first = await client.get(path, { query: { limit: 1 } });
    const rest = await client.get(path, { query: { cursor: first.body.next_cursor } });
    expect(rest.body.data).toHaveLength(2);
    const tooMany = await client.get(path, { query: { limit: MAX_LIMIT + 1 } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors).toEqual({ limit: [`The limit parameter must be an integer between 1 and ${MAX_LIMIT}.`] });
    const tampered = await client.get(path, { query: { cursor: `${first.body.next_cursor}x` } });
    expect(tampered.status).toBe(422);
    expect(Object.keys(tampered.body.errors)).toEqual(['cursor']);
  });
});

describe('webhook quota', () => {
  it(`lets a team hold ${MAX_WEBHOOKS} webhooks, refuses more with 409 quota_exceeded even when racing, and frees a slot on delete`, async () => {
    const { client, path } = await newTeam();
    const responses = await Promise.all(Array.from({ length: MAX_WEBHOOKS + 5 }, () => create(client, path)));
    const created = responses.filter((response) => response.status === 201);
    expect(created).toHaveLength(MAX_WEBHOOKS);
    for (const response of responses.filter((candidate) => candidate.status !== 201)) {
      expect(response.status).toBe(409);
      expect(response.body).toEqual({ message: `The team has reached its limit of ${MAX_WEBHOOKS} webhooks.`, code: 'quota_exceeded', limit: MAX_WEBHOOKS });
    }
    expect((await client.get(path)).body.data).toHaveLength(MAX_WEBHOOKS);

    // Another team is not held back by this one.
    const other = await newTeam();
    expect((await create(other.client, other.path)).status).toBe(201);

    expect((await client.delete(`${path}/${created[0]!.body.id}`)).status).toBe(204);
    expect((await create(client, path)).status).toBe(201);
    expect((await create(client, path)).status).toBe(409);
  });
});
