// Paged lists (organizations by default, projects on request) and the per-team quotas on
// organizations and projects, through the gateway against the real token and project services.
import { api, bootstrapTeam, startSystem, type ApiClient, type BootstrapResult, type System } from '@worklane/testing';

const DEFAULT_LIMIT = 3;
const MAX_LIMIT = 5;
const MAX_ORGANIZATIONS = 8;
const MAX_PROJECTS = 6;
/** The smallest page budget the configuration allows (LIST_MAX_PAGE_BYTES). */
const MAX_PAGE_BYTES = 65_536;

let system: System;

beforeAll(async () => {
  system = await startSystem({
    services: ['token', 'gateway', 'project'],
    serviceEnv: {
      project: {
        LIST_DEFAULT_LIMIT: DEFAULT_LIMIT,
        LIST_MAX_LIMIT: MAX_LIMIT,
        TEAM_MAX_ORGANIZATIONS: MAX_ORGANIZATIONS,
        TEAM_MAX_PROJECTS: MAX_PROJECTS,
        LIST_MAX_PAGE_BYTES: MAX_PAGE_BYTES,
      },
    },
  });
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

async function newTeam(): Promise<{ team: BootstrapResult; client: ApiClient }> {
  const team = await bootstrapTeam(system);
  return { team, client: api(system, team.token) };
}

/** The target of a `Link: <...>; rel="next"` header, or undefined when there is none. */
function nextLink(headers: Record<string, string>): string | undefined {
  const match = /<([^>]*)>;\s*rel="next"/.exec(headers.link ?? '');
  return match?.[1];
}

/** Follows next links from `first` to the end, checking body and header agree on each page. */
async function walk(client: ApiClient, first: string, query: Record<string, string | number> = {}) {
  const pages: { id: number }[][] = [];
  let response = await client.get(first, { query });
  for (;;) {
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['data', 'next_cursor']);
    pages.push(response.body.data);
    const link = nextLink(response.headers);
    if (response.body.next_cursor === null) {
      expect(link).toBeUndefined();
      return pages;
    }
    // The link is the public path under the gateway, relative to its origin.
    expect(link).toMatch(/^\/api\/v1\/teams\/\d+\//);
    expect(new URL(link!, 'http://x').searchParams.get('cursor')).toBe(response.body.next_cursor);
    response = await client.get(`${system.gatewayUrl}${link}`);
  }
}

describe('organizations: an extension list, paged by default', () => {
  it(`serves ${DEFAULT_LIMIT} per page by default, with next_cursor and a Link header to the next page`, async () => {
    const { team, client } = await newTeam();
    const created = [team.organization_id];
    for (let i = 0; i < 6; i++) created.push((await client.post(`/teams/${team.team_id}/organizations`, { name: `Org ${i}` })).body.id);
    const pages = await walk(client, `/teams/${team.team_id}/organizations`);
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((organization) => organization.id)).toEqual(created);
  });

  it('takes ?limit= up to the maximum and keeps it in the next link', async () => {
    const { team, client } = await newTeam();
    for (let i = 0; i < 5; i++) await client.post(`/teams/${team.team_id}/organizations`, { name: `Org ${i}` });
    const first = await client.get(`/teams/${team.team_id}/organizations`, { query: { limit: MAX_LIMIT } });
    expect(first.body.data).toHaveLength(MAX_LIMIT);
    expect(new URL(nextLink(first.headers)!, 'http://x').searchParams.get('limit')).toBe(String(MAX_LIMIT));
    const pages = await walk(client, `/teams/${team.team_id}/organizations`, { limit: 2 });
    expect(pages.map((page) => page.length)).toEqual([2, 2, 2]);
    expect(new Set(pages.flat().map((organization) => organization.id)).size).toBe(6);
  });

  it('refuses a bad limit or cursor with 422 naming the parameter', async () => {
    const { team, client } = await newTeam();
    const path = `/teams/${team.team_id}/organizations`;
    for (const limit of ['0', String(MAX_LIMIT + 1), 'ten', '-1', '1.5', '']) {
      const response = await client.get(path, { query: { limit } });
      expect(response.status).toBe(422);
      expect(response.body).toEqual({
        message: `The limit parameter must be an integer between 1 and ${MAX_LIMIT}.`,
        code: 'validation_failed',
        errors: { limit: [expect.any(String)] },
      });
    }
    const garbage = ['%%%', 'bm90IGpzb24', Buffer.from('{"v":1,"l":"organizations","k":"1; DROP"}').toString('base64url'), 'A'.repeat(600)];
    for (const cursor of garbage) {
      const response = await client.get(path, { query: { cursor } });
      expect(response.status).toBe(422);
      expect(Object.keys(response.body.errors)).toEqual(['cursor']);
    }
    const repeated = await client.get(`${path}?limit=1&limit=2`);
    expect(repeated.status).toBe(422);
    expect(Object.keys(repeated.body.errors)).toEqual(['limit']);
  });

  it("refuses another list's cursor", async () => {
    const { team, client } = await newTeam();
    const projects = `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;
    await client.post(projects, { name: 'a' });
    await client.post(projects, { name: 'b' });
    const cursor = (await client.get(projects, { query: { limit: 1 } })).body.next_cursor;
    expect(typeof cursor).toBe('string');
    const response = await client.get(`/teams/${team.team_id}/organizations`, { query: { cursor } });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['cursor']);
  });
});

describe('projects: the SPEC list, whole unless paging is asked for', () => {
  it('returns every project under data alone without limit or cursor, and pages with them', async () => {
    const { team, client } = await newTeam();
    const path = `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;
    const created: number[] = [];
    for (let i = 0; i < 5; i++) created.push((await client.post(path, { name: `Project ${i}` })).body.id);
    const whole = await client.get(path);
    expect(whole.status).toBe(200);
    expect(Object.keys(whole.body)).toEqual(['data']);
    expect(whole.body.data.map((project: { id: number }) => project.id)).toEqual(created);
    expect(whole.headers.link).toBeUndefined();

    const pages = await walk(client, path, { limit: 2 });
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((project) => project.id)).toEqual(created);
  });

  it('reads the whole list in batches of its byte budget and still answers every project, in order', async () => {
    const { team, client } = await newTeam();
    const path = `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;
    // 30,000 bytes each: a read of the 64 KiB budget takes 4 of them (the rows that may fit and the
    // one after), so the whole list takes two reads, the first short of its row count.
    const description = '€'.repeat(10_000);
    const created: number[] = [];
    for (let i = 0; i < MAX_PROJECTS; i++) created.push((await client.post(path, { name: `Large ${i}`, description })).body.id);
    const whole = await client.get(path);
    expect(whole.status).toBe(200);
    expect(Object.keys(whole.body)).toEqual(['data']);
    expect(whole.body.data.map((project: { id: number }) => project.id)).toEqual(created);
    expect(whole.body.data.every((project: { description: string }) => project.description === description)).toBe(true);
  });

  it('answers 404 for an organization not in the team, even with a cursor', async () => {
    const { team, client } = await newTeam();
    const other = await newTeam();
    const path = `/teams/${team.team_id}/organizations/${other.team.organization_id}/projects`;
    expect((await client.get(path)).status).toBe(404);
    expect((await client.get(path, { query: { limit: 2 } })).status).toBe(404);
  });

  it('answers an empty last page, not 404, for a cursor past the last project', async () => {
    const { team, client } = await newTeam();
    const path = `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;
    await client.post(path, { name: 'Only' });
    await client.post(path, { name: 'Two' });
    const first = await client.get(path, { query: { limit: 1 } });
    const second = await client.get(path, { query: { limit: 1, cursor: first.body.next_cursor } });
    expect(second.body).toEqual({ data: [expect.objectContaining({ name: 'Two' })], next_cursor: null });
  });
});

describe('per-team quotas', () => {
  it(`refuses the organization after the ${MAX_ORGANIZATIONS}th with 409 quota_exceeded, even under concurrent creates`, async () => {
    const { team, client } = await newTeam();
    // The bootstrap made one; 12 concurrent creates race for the remaining slots.
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => client.post(`/teams/${team.team_id}/organizations`, { name: `Racing ${i}` })));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(MAX_ORGANIZATIONS - 1);
    const refused = responses.filter((response) => response.status !== 201);
    expect(refused).toHaveLength(12 - (MAX_ORGANIZATIONS - 1));
    for (const response of refused) {
      expect(response.status).toBe(409);
      expect(response.body).toEqual({
        message: `The team has reached its limit of ${MAX_ORGANIZATIONS} organizations.`,
        code: 'quota_exceeded',
        limit: MAX_ORGANIZATIONS,
      });
    }
    const listed = await walk(client, `/teams/${team.team_id}/organizations`, { limit: MAX_LIMIT });
    expect(listed.flat()).toHaveLength(MAX_ORGANIZATIONS);

    // Another team is not affected by this one being full.
    const other = await newTeam();
    expect((await other.client.post(`/teams/${other.team.team_id}/organizations`, { name: 'Mine' })).status).toBe(201);
  });

  it(`counts projects over all the team's organizations and refuses the ${MAX_PROJECTS + 1}th`, async () => {
    const { team, client } = await newTeam();
    const second = (await client.post(`/teams/${team.team_id}/organizations`, { name: 'Second' })).body.id;
    const paths = [team.organization_id, second].map((organization) => `/teams/${team.team_id}/organizations/${organization}/projects`);
    // Same names in one organization: the quota lock and the slug allocation work together.
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => client.post(paths[i % 2]!, { name: 'Same name' })));
    expect(responses.filter((response) => response.status === 201)).toHaveLength(MAX_PROJECTS);
    for (const response of responses.filter((candidate) => candidate.status !== 201)) {
      expect(response.status).toBe(409);
      expect(response.body).toMatchObject({ code: 'quota_exceeded', limit: MAX_PROJECTS, message: expect.stringContaining(`${MAX_PROJECTS} projects`) });
    }
    const listed = await Promise.all(paths.map((path) => client.get(path)));
    expect(listed.flatMap((response) => response.body.data)).toHaveLength(MAX_PROJECTS);
    const slugs = listed.map((response) => response.body.data.map((project: { slug: string }) => project.slug));
    for (const list of slugs) expect(new Set(list).size).toBe(list.length);
  });
});
