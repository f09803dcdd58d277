// The project and organization routes of the README's API table, through the gateway against the real
// token, project and webhook services, with tokens made by the CLI's bootstrap.
import { api, bootstrapTeam, revokeToken, startSystem, type ApiClient, type BootstrapResult, type System } from '@worklane/testing';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const PROJECT_FIELDS = ['created_at', 'description', 'github_repository', 'id', 'name', 'organization_id', 'slug', 'updated_at'];
const ORGANIZATION_FIELDS = ['created_at', 'id', 'name', 'team_id', 'updated_at'];

let system: System;
let mine: BootstrapResult;
let theirs: BootstrapResult;
let client: ApiClient;
let theirClient: ApiClient;

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'gateway', 'project', 'webhook'] });
  [mine, theirs] = await Promise.all([bootstrapTeam(system), bootstrapTeam(system)]);
  client = api(system, mine.token);
  theirClient = api(system, theirs.token);
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

const projects = (team = mine) => `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;

async function createProject(body: Record<string, unknown>, path = projects()) {
  const response = await client.post(path, body);
  expect(response.status).toBe(201);
  return response.body;
}

async function createOrganization(name: string): Promise<number> {
  const response = await client.post(`/teams/${mine.team_id}/organizations`, { name });
  expect(response.status).toBe(201);
  return response.body.id;
}

describe('4.2 create a project', () => {
  it('returns 201 with the bare Project, null description and repository when not sent', async () => {
    const response = await client.post(projects(), { name: 'Backend API' });
    expect(response.status).toBe(201);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(response.body).sort()).toEqual(PROJECT_FIELDS);
    expect(response.body).toMatchObject({
      organization_id: mine.organization_id,
      name: 'Backend API',
      slug: 'backend-api',
      description: null,
      github_repository: null,
    });
    expect(response.body.created_at).toMatch(TIMESTAMP);
    expect(response.body.updated_at).toMatch(TIMESTAMP);
  });

  it('keeps description and github_repository when sent', async () => {
    const project = await createProject({ name: 'Web', description: 'Customer app', github_repository: 'acme/web' });
    expect(project).toMatchObject({ description: 'Customer app', github_repository: 'acme/web' });
  });

  it('ignores server-owned and unknown fields', async () => {
    const project = await createProject({ name: 'Owned', id: 1, slug: 'mine', organization_id: theirs.organization_id, created_at: '2000-01-01T00:00:00.000000Z', x: 1 });
    expect(project).toMatchObject({ slug: 'owned', organization_id: mine.organization_id });
    expect(project.created_at.startsWith('2000')).toBe(false);
  });

  it('answers 422 with per-field errors', async () => {
    const response = await client.post(projects(), { description: 5, github_repository: 'no-slash' });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: 'The name field is required.',
      code: 'validation_failed',
      errors: {
        name: ['The name field is required.'],
        description: ['The description field must be a string.'],
        github_repository: ['The github repository field must be a GitHub repository in owner/repo format.'],
      },
    });
  });
});

describe('4.1 list projects', () => {
  it('returns {"data": [...]} with every project of the organization in creation order', async () => {
    const organization = await createOrganization('Listing');
    const path = `/teams/${mine.team_id}/organizations/${organization}/projects`;
    expect((await client.get(path)).body).toEqual({ data: [] });
    const created = [await createProject({ name: 'Second' }, path), await createProject({ name: 'First' }, path)];
    const response = await client.get(path);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ data: created });
  });

  it('streams the whole set across read batches, in order, as one JSON document', async () => {
    const organization = await createOrganization('Many');
    const path = `/teams/${mine.team_id}/organizations/${organization}/projects`;
    // 2.5 of the list's read batches (WHOLE_LIST_BATCH = 100), so both the batch boundary and a short last batch are crossed.
    const created: Array<{ id: number }> = [];
    for (let i = 0; i < 250; i += 10) {
      created.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => createProject({ name: `P ${i + j}` }, path)))));
    }
    created.sort((a, b) => a.id - b.id);
    const response = await client.get(path);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body.data.map((p: { id: number }) => p.id)).toEqual(created.map((p) => p.id));
    expect(Object.keys(response.body)).toEqual(['data']);
  });
});

describe('4.3 update a project', () => {
  it('changes only what is sent and returns 200 with the Project', async () => {
    const project = await createProject({ name: 'Patchable', description: 'Old', github_repository: 'acme/old' });
    const response = await client.patch(`${projects()}/${project.id}`, { github_repository: 'acme/new', slug: 'ignored' });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(PROJECT_FIELDS);
    expect(response.body).toMatchObject({ name: 'Patchable', slug: 'patchable', description: 'Old', github_repository: 'acme/new' });
    expect(response.body.updated_at > project.updated_at).toBe(true);
  });

  it('clears optional fields with null and refuses a null name', async () => {
    const project = await createProject({ name: 'Nullable', description: 'x', github_repository: 'acme/x' });
    const path = `${projects()}/${project.id}`;
    expect((await client.patch(path, { description: null, github_repository: null })).body).toMatchObject({ description: null, github_repository: null });
    const response = await client.patch(path, { name: null });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ message: 'The name field must not be null.', code: 'validation_failed', errors: { name: ['The name field must not be null.'] } });
  });

  it('regenerates the slug on rename', async () => {
    const project = await createProject({ name: 'Old Name' });
    const response = await client.patch(`${projects()}/${project.id}`, { name: 'New Name' });
    expect(response.body).toMatchObject({ name: 'New Name', slug: 'new-name' });
  });

  it('reads one project back with GET', async () => {
    const project = await createProject({ name: 'Readable' });
    expect((await client.get(`${projects()}/${project.id}`)).body).toEqual(project);
  });
});

describe('slugs', () => {
  it('suffixes duplicates -1, -2 within the organization', async () => {
    const organization = await createOrganization('Slugs');
    const path = `/teams/${mine.team_id}/organizations/${organization}/projects`;
    const slugs = [];
    for (const name of ['Duplicate', 'duplicate', 'DUPLICATE']) slugs.push((await createProject({ name }, path)).slug);
    expect(slugs).toEqual(['duplicate', 'duplicate-1', 'duplicate-2']);
  });

  it.each([
    ['Marketing & Sales (EU) — Q3!', 'marketing-sales-eu-q3'],
    ['under_score  and   spaces', 'under-score-and-spaces'],
    ['Ops@Night', 'ops-at-night'],
    ['Café Zürich Ørsted', 'cafe-zurich-orsted'],
    ['***', 'project'],
  ])('%j -> %s', async (name, slug) => {
    const organization = await createOrganization(`Slug ${slug}`);
    expect((await createProject({ name }, `/teams/${mine.team_id}/organizations/${organization}/projects`)).slug).toBe(slug);
  });
});

describe('organizations', () => {
  it('lists and creates organizations of the team', async () => {
    const created = await client.post(`/teams/${mine.team_id}/organizations`, { name: 'Extra' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(ORGANIZATION_FIELDS);
    expect(created.body.team_id).toBe(mine.team_id);
    const list = await client.get(`/teams/${mine.team_id}/organizations`);
    expect(list.status).toBe(200);
    const ids = list.body.data.map((organization: { id: number }) => organization.id);
    expect(ids).toContain(mine.organization_id);
    expect(ids).toContain(created.body.id);
    expect(ids).not.toContain(theirs.organization_id);
  });
});

describe('authentication and scoping', () => {
  it('answers 401 without a token, with an unknown one and with a revoked one', async () => {
    for (const anonymous of [api(system), api(system, 'wl_not-a-real-token'), api(system, 'garbage')]) {
      const response = await anonymous.get(projects());
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ message: 'Unauthenticated.', code: 'unauthenticated' });
    }
    const extra = await bootstrapTeam(system);
    expect((await api(system, extra.token).get(projects(extra))).status).toBe(200);
    await revokeToken(system, { teamId: extra.team_id, tokenId: extra.token_id });
    expect((await api(system, extra.token).get(projects(extra))).status).toBe(401);
  });

  it("answers 403 for another team's path, on every route and verb", async () => {
    const theirProject = (await theirClient.post(projects(theirs), { name: 'Theirs' })).body;
    const calls = [
      client.get(`/teams/${theirs.team_id}/organizations`),
      client.post(`/teams/${theirs.team_id}/organizations`, { name: 'Intruder' }),
      client.get(projects(theirs)),
      client.post(projects(theirs), { name: 'Intruder' }),
      client.get(`${projects(theirs)}/${theirProject.id}`),
      client.patch(`${projects(theirs)}/${theirProject.id}`, { name: 'Intruder' }),
      client.get(`/teams/987654/organizations`),
    ];
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ message: 'This action is unauthorized.', code: 'forbidden' });
    }
    expect((await theirClient.get(`${projects(theirs)}/${theirProject.id}`)).body).toEqual(theirProject);
  });

  it("answers 404 for another team's organization and project ids under one's own team", async () => {
    const theirProject = (await theirClient.post(projects(theirs), { name: 'Hidden' })).body;
    const foreignOrganization = `/teams/${mine.team_id}/organizations/${theirs.organization_id}/projects`;
    const calls = [
      client.get(foreignOrganization),
      client.post(foreignOrganization, { name: 'Intruder' }),
      client.get(`${foreignOrganization}/${theirProject.id}`),
      client.patch(`${foreignOrganization}/${theirProject.id}`, { name: 'Intruder' }),
      client.get(`${projects()}/${theirProject.id}`),
      client.patch(`${projects()}/${theirProject.id}`, { name: 'Intruder' }),
    ];
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'Not found.', code: 'not_found' });
    }
    const theirList = (await theirClient.get(projects(theirs))).body.data;
    expect(theirList.find((project: { id: number }) => project.id === theirProject.id)).toEqual(theirProject);
    expect(theirList.map((project: { name: string }) => project.name)).not.toContain('Intruder');
  });
});

describe('HTTP edge cases', () => {
  it('answers 404 for unknown routes and non-integer ids', async () => {
    for (const path of ['/nothing', `/teams/${mine.team_id}/organizations/abc/projects`, `${projects()}/1.5`]) {
      const response = await client.get(path);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'Not found.', code: 'not_found' });
    }
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const project = await createProject({ name: 'Not deletable' });
    const response = await client.delete(`${projects()}/${project.id}`);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, PATCH, HEAD');
  });

  it('answers 400, 415 and 413 for broken bodies, as JSON whatever Accept says', async () => {
    const badJson = await client.post(projects(), '{"name":', { raw: true, headers: { accept: 'text/html' } });
    expect(badJson.status).toBe(400);
    expect(badJson.headers['content-type']).toMatch(/^application\/json/);
    const form = await client.post(projects(), 'name=x', { raw: true, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    const huge = await client.post(projects(), { name: 'x', description: 'd'.repeat(1_100_000) });
    expect(huge.status).toBe(413);
  });
});
