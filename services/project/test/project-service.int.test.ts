// The project service called directly, with identities signed as the gateway signs them: the
// service's own guarantees (signed identity, team check, slugs under concurrency, timestamps),
// independent of the gateway in front of it.
import request from 'supertest';
import { signIdentity } from '@worklane/http';
import { createMetricsServer } from '@worklane/observability';
import { signerOf, signingKeyPairs } from '@worklane/testing';
import { startDirectProjectService, type DirectProjectService } from './support/direct';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const PROJECT_FIELDS = ['created_at', 'description', 'github_repository', 'id', 'name', 'organization_id', 'slug', 'updated_at'];
const ORGANIZATION_FIELDS = ['created_at', 'id', 'name', 'team_id', 'updated_at'];

let service: DirectProjectService;
beforeAll(async () => {
  service = await startDirectProjectService();
});
afterAll(async () => {
  await service?.stop();
});

const TEAM = 1;
const OTHER_TEAM = 2;
const team = () => service.as(TEAM);
const otherTeam = () => service.as(OTHER_TEAM);

async function newOrganization(teamId = TEAM, name = 'Acme'): Promise<number> {
  const response = await service.as(teamId).post(`/api/v1/teams/${teamId}/organizations`, { name });
  expect(response.status).toBe(201);
  return response.body.id;
}

const projectsPath = (organizationId: number, teamId = TEAM) => `/api/v1/teams/${teamId}/organizations/${organizationId}/projects`;

async function newProject(organizationId: number, body: Record<string, unknown>, teamId = TEAM) {
  const response = await service.as(teamId).post(projectsPath(organizationId, teamId), body);
  expect(response.status).toBe(201);
  return response.body;
}

describe('organizations', () => {
  it('creates an organization and returns it bare with exactly its fields', async () => {
    const response = await team().post(`/api/v1/teams/${TEAM}/organizations`, { name: '  Platform  ', id: 5, team_id: 9 });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(ORGANIZATION_FIELDS);
    expect(response.body).toMatchObject({ team_id: TEAM, name: 'Platform' });
    expect(response.body.created_at).toMatch(TIMESTAMP);
    expect(response.body.updated_at).toBe(response.body.created_at);
  });

  it("lists only the team's organizations, in creation order, under data", async () => {
    const first = await newOrganization(OTHER_TEAM, 'Other team org');
    const a = await newOrganization(TEAM, 'List A');
    const b = await newOrganization(TEAM, 'List B');
    const response = await team().get(`/api/v1/teams/${TEAM}/organizations`);
    expect(response.status).toBe(200);
    // An extension list: paged by default, the next cursor beside the data (null: last page).
    expect(Object.keys(response.body)).toEqual(['data', 'next_cursor']);
    expect(response.body.next_cursor).toBeNull();
    const ids = response.body.data.map((organization: { id: number }) => organization.id);
    expect(ids).toEqual([...ids].sort((x: number, y: number) => x - y));
    expect(ids).toEqual(expect.arrayContaining([a, b]));
    expect(ids).not.toContain(first);
    for (const organization of response.body.data) expect(organization.team_id).toBe(TEAM);
  });

  it('validates the name', async () => {
    for (const [body, message] of [
      [{}, 'The name field is required.'],
      [{ name: ' ' }, 'The name field is required.'],
      [{ name: 7 }, 'The name field must be a string.'],
      [{ name: 'x'.repeat(256) }, 'The name field must not be greater than 255 characters.'],
    ] as const) {
      const response = await team().post(`/api/v1/teams/${TEAM}/organizations`, body);
      expect(response.status).toBe(422);
      expect(response.body).toEqual({ message, code: 'validation_failed', errors: { name: [message] } });
    }
  });

  it("refuses another team's path with 403 on every verb", async () => {
    expect((await team().get(`/api/v1/teams/${OTHER_TEAM}/organizations`)).status).toBe(403);
    const post = await team().post(`/api/v1/teams/${OTHER_TEAM}/organizations`, { name: 'Intruder' });
    expect(post.status).toBe(403);
    expect(post.body).toEqual({ message: 'This action is unauthorized.', code: 'forbidden' });
    expect((await team().get(`/api/v1/teams/999999/organizations`)).status).toBe(403);
  });
});

describe('projects', () => {
  let organizationId: number;
  beforeAll(async () => {
    organizationId = await newOrganization(TEAM, 'Projects org');
  });

  it('creates a project with exactly the ProjectResource fields, nulls for what was not sent', async () => {
    const response = await team().post(projectsPath(organizationId), { name: 'Backend API' });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(PROJECT_FIELDS);
    expect(response.body).toMatchObject({
      organization_id: organizationId,
      name: 'Backend API',
      slug: 'backend-api',
      description: null,
      github_repository: null,
    });
    expect(response.body.created_at).toMatch(TIMESTAMP);
    expect(response.body.updated_at).toMatch(TIMESTAMP);
    expect(response.headers.location).toBe(`${projectsPath(organizationId)}/${response.body.id}`);
  });

  it('keeps description and repository when sent, and ignores server-owned and unknown fields', async () => {
    const project = await newProject(organizationId, {
      name: 'Web App',
      description: 'Customer-facing app',
      github_repository: 'acme/web-app',
      id: 1,
      slug: 'chosen-slug',
      organization_id: 999,
      created_at: '2000-01-01T00:00:00.000000Z',
      updated_at: '2000-01-01T00:00:00.000000Z',
      colour: 'red',
    });
    expect(project).toMatchObject({ name: 'Web App', slug: 'web-app', description: 'Customer-facing app', github_repository: 'acme/web-app', organization_id: organizationId });
    expect(project.id).not.toBe(1);
    expect(project.created_at.startsWith('2000')).toBe(false);
  });

  it('lists projects under data in creation order, and GET returns one', async () => {
    const organization = await newOrganization(TEAM, 'Listing org');
    expect((await team().get(projectsPath(organization))).body).toEqual({ data: [] });
    const created = [];
    for (const name of ['Zeta', 'Alpha', 'Mu']) created.push(await newProject(organization, { name }));
    const list = await team().get(projectsPath(organization));
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: created });
    const single = await team().get(`${projectsPath(organization)}/${created[1].id}`);
    expect(single.status).toBe(200);
    expect(single.body).toEqual(created[1]);
  });

  it('answers 422 with per-field errors for every invalid field at once', async () => {
    const response = await team().post(projectsPath(organizationId), {
      name: '',
      description: 42,
      github_repository: 'not/a/repo',
    });
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

  it('treats a missing body as an empty object and a non-object body as a 422', async () => {
    const missing = await team().send('POST', projectsPath(organizationId));
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual({ name: ['The name field is required.'] });
    const array = await team().post(projectsPath(organizationId), [{ name: 'x' }]);
    expect(array.status).toBe(422);
  });

  it('enforces the description limit of 10,000 characters', async () => {
    expect((await team().post(projectsPath(organizationId), { name: 'Long text', description: 'd'.repeat(10_000) })).status).toBe(201);
    const tooLong = await team().post(projectsPath(organizationId), { name: 'Long text', description: 'd'.repeat(10_001) });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors.description).toEqual(['The description field must not be greater than 10000 characters.']);
  });

  describe('PATCH', () => {
    it('changes only the fields sent and moves updated_at', async () => {
      const project = await newProject(organizationId, { name: 'Patch me', description: 'Before', github_repository: 'acme/patch' });
      const response = await team().patch(`${projectsPath(organizationId)}/${project.id}`, { description: 'After' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ ...project, description: 'After', updated_at: expect.any(String) });
      expect(response.body.updated_at > project.updated_at).toBe(true);
      expect(response.body.created_at).toBe(project.created_at);
      expect((await team().get(`${projectsPath(organizationId)}/${project.id}`)).body).toEqual(response.body);
    });

    it('clears description and repository with null', async () => {
      const project = await newProject(organizationId, { name: 'Clear me', description: 'Something', github_repository: 'acme/clear' });
      const response = await team().patch(`${projectsPath(organizationId)}/${project.id}`, { description: null, github_repository: null });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ description: null, github_repository: null, name: 'Clear me' });
    });

    it('leaves the project untouched, updated_at included, when nothing changes', async () => {
      const project = await newProject(organizationId, { name: 'Same', description: 'Same' });
      for (const body of [{}, { name: 'Same', description: 'Same' }, { slug: 'other', id: 1, colour: 'red' }]) {
        const response = await team().patch(`${projectsPath(organizationId)}/${project.id}`, body);
        expect(response.status).toBe(200);
        expect(response.body).toEqual(project);
      }
    });

    it('refuses a null name and fields of the wrong type, changing nothing', async () => {
      const project = await newProject(organizationId, { name: 'Strict' });
      const path = `${projectsPath(organizationId)}/${project.id}`;
      for (const [body, field, message] of [
        [{ name: null }, 'name', 'The name field must not be null.'],
        [{ name: '  ' }, 'name', 'The name field is required.'],
        [{ name: ['Strict'] }, 'name', 'The name field must be a string.'],
        [{ description: { text: 'x' } }, 'description', 'The description field must be a string.'],
        [{ github_repository: 12 }, 'github_repository', 'The github repository field must be a string.'],
        [{ github_repository: 'owner-/repo' }, 'github_repository', 'The github repository field must be a GitHub repository in owner/repo format.'],
      ] as const) {
        const response = await team().patch(path, body);
        expect(response.status).toBe(422);
        expect(response.body.errors).toEqual({ [field]: [message] });
      }
      expect((await team().get(path)).body).toEqual(project);
    });

    it('regenerates the slug on rename, keeping its own slug out of the way', async () => {
      const organization = await newOrganization(TEAM, 'Rename org');
      const first = await newProject(organization, { name: 'Mobile' });
      const second = await newProject(organization, { name: 'Mobile' });
      expect(second.slug).toBe('mobile-1');
      const renamed = await team().patch(`${projectsPath(organization)}/${first.id}`, { name: 'iOS App' });
      expect(renamed.body.slug).toBe('ios-app');
      // "mobile" is free again; renaming the second to a name with the same slug takes it.
      const back = await team().patch(`${projectsPath(organization)}/${second.id}`, { name: 'MOBILE!' });
      expect(back.body).toMatchObject({ name: 'MOBILE!', slug: 'mobile' });
      const same = await team().patch(`${projectsPath(organization)}/${second.id}`, { name: 'Mobile' });
      expect(same.body.slug).toBe('mobile');
    });
  });

  describe('slugs', () => {
    it.each([
      ['Hello, World! (2024)', 'hello-world-2024'],
      ['snake_case_name', 'snake-case-name'],
      ['Ops @ Night', 'ops-at-night'],
      ['Crème Brûlée Straße', 'creme-brulee-strasse'],
      ['Привет мир', 'privet-mir'],
      ['!!!', 'project'],
      ['🚀', 'project'],
    ])('%j -> %s', async (name, slug) => {
      const organization = await newOrganization(TEAM, `Slug org ${slug}`);
      expect((await newProject(organization, { name })).slug).toBe(slug);
    });

    it('adds the smallest free suffix for duplicates within an organization only', async () => {
      const organization = await newOrganization(TEAM, 'Duplicates');
      const slugs = [];
      for (const name of ['Backend', 'backend', 'BACKEND!', 'Backend']) slugs.push((await newProject(organization, { name })).slug);
      expect(slugs).toEqual(['backend', 'backend-1', 'backend-2', 'backend-3']);

      // Free "backend-1" by renaming it: the next duplicate takes it rather than backend-4.
      const list = (await team().get(projectsPath(organization))).body.data;
      await team().patch(`${projectsPath(organization)}/${list[1].id}`, { name: 'Something else' });
      expect((await newProject(organization, { name: 'Backend' })).slug).toBe('backend-1');
      expect((await newProject(organization, { name: 'Backend' })).slug).toBe('backend-4');

      const elsewhere = await newOrganization(TEAM, 'Elsewhere');
      expect((await newProject(elsewhere, { name: 'Backend' })).slug).toBe('backend');
    });

    it('does not confuse a name that merely starts like another', async () => {
      const organization = await newOrganization(TEAM, 'Prefixes');
      expect((await newProject(organization, { name: 'API 1' })).slug).toBe('api-1');
      expect((await newProject(organization, { name: 'API' })).slug).toBe('api');
      expect((await newProject(organization, { name: 'API' })).slug).toBe('api-2');
    });

    it('keeps long slugs within 250 characters, suffix included', async () => {
      const organization = await newOrganization(TEAM, 'Long names');
      const name = `${'a'.repeat(248)} bcdef`;
      const first = await newProject(organization, { name });
      const second = await newProject(organization, { name });
      expect(first.slug).toBe(`${'a'.repeat(248)}-b`);
      expect(second.slug).toBe(`${'a'.repeat(248)}-1`);
      expect((await newProject(organization, { name })).slug).toBe(`${'a'.repeat(248)}-2`);
    });

    it('gives concurrent creations of one name distinct slugs, without failing any', async () => {
      const organization = await newOrganization(TEAM, 'Concurrent');
      const responses = await Promise.all(Array.from({ length: 12 }, () => team().post(projectsPath(organization), { name: 'Race' })));
      expect(responses.map((response) => response.status)).toEqual(Array(12).fill(201));
      const slugs = responses.map((response) => response.body.slug).sort();
      expect(slugs).toEqual(['race', ...Array.from({ length: 11 }, (_, i) => `race-${i + 1}`)].sort());
    });

    it('counts the races it retried', async () => {
      const metrics = await service.metrics.registry.getSingleMetricAsString('worklane_project_slug_conflicts_total');
      expect(metrics).toContain('worklane_project_slug_conflicts_total');
    });
  });
});

describe('scoping', () => {
  let mine: number;
  let theirs: number;
  let myProject: { id: number };
  let theirProject: { id: number };
  beforeAll(async () => {
    mine = await newOrganization(TEAM, 'Mine');
    theirs = await newOrganization(OTHER_TEAM, 'Theirs');
    myProject = await newProject(mine, { name: 'Mine' });
    theirProject = await newProject(theirs, { name: 'Theirs' }, OTHER_TEAM);
  });

  it("answers 403 for another team's path on every project route and verb", async () => {
    const paths = [projectsPath(theirs, OTHER_TEAM), `${projectsPath(theirs, OTHER_TEAM)}/${theirProject.id}`];
    for (const response of [
      await team().get(paths[0]!),
      await team().post(paths[0]!, { name: 'Intruder' }),
      await team().get(paths[1]!),
      await team().patch(paths[1]!, { name: 'Intruder' }),
    ]) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ message: 'This action is unauthorized.', code: 'forbidden' });
    }
  });

  it("answers 404 for another team's organization under one's own team path", async () => {
    for (const response of [
      await team().get(projectsPath(theirs)),
      await team().post(projectsPath(theirs), { name: 'Intruder' }),
      await team().get(`${projectsPath(theirs)}/${theirProject.id}`),
      await team().patch(`${projectsPath(theirs)}/${theirProject.id}`, { name: 'Intruder' }),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'Not found.', code: 'not_found' });
    }
  });

  it("answers 404 for another team's project under one's own organization", async () => {
    expect((await team().get(`${projectsPath(mine)}/${theirProject.id}`)).status).toBe(404);
    expect((await team().patch(`${projectsPath(mine)}/${theirProject.id}`, { name: 'Intruder' })).status).toBe(404);
  });

  it('answers 404 for a project of another organization of the same team', async () => {
    const sibling = await newOrganization(TEAM, 'Sibling');
    expect((await team().get(`${projectsPath(sibling)}/${myProject.id}`)).status).toBe(404);
    expect((await team().patch(`${projectsPath(sibling)}/${myProject.id}`, { name: 'Moved?' })).status).toBe(404);
  });

  it("leaves the other team's data untouched and unseen", async () => {
    const theirs2 = (await otherTeam().get(projectsPath(theirs, OTHER_TEAM))).body.data;
    expect(theirs2).toEqual([expect.objectContaining({ id: theirProject.id, name: 'Theirs', slug: 'theirs' })]);
    const mineList = (await team().get(projectsPath(mine))).body.data;
    expect(mineList.map((project: { id: number }) => project.id)).not.toContain(theirProject.id);
  });

  it('answers 404 for ids that are not positive integers and for unknown routes', async () => {
    for (const path of [
      `/api/v1/teams/${TEAM}/organizations/abc/projects`,
      `/api/v1/teams/${TEAM}/organizations/0/projects`,
      `/api/v1/teams/${TEAM}/organizations/-1/projects`,
      `/api/v1/teams/${TEAM}/organizations/1.5/projects`,
      `${projectsPath(mine)}/abc`,
      `${projectsPath(mine)}/99999999999999999999`,
      `/api/v1/teams/abc/organizations`,
      `/api/v1/teams/${TEAM}/nothing-here`,
    ]) {
      const response = await team().get(path);
      expect({ path, status: response.status, body: response.body }).toEqual({ path, status: 404, body: { message: 'Not found.', code: 'not_found' } });
    }
  });

  it('answers 405 with Allow for a method a known path does not have', async () => {
    const project = await team().delete(`${projectsPath(mine)}/${myProject.id}`);
    expect(project.status).toBe(405);
    expect(project.headers.allow).toBe('GET, PATCH, HEAD');
    const collection = await team().send('PUT', projectsPath(mine));
    expect(collection.status).toBe(405);
    expect(collection.headers.allow).toBe('GET, POST, HEAD');
  });

  it('maps broken bodies to 400, 415 and 413', async () => {
    const path = projectsPath(mine);
    const badJson = await team().send('POST', path, { body: '{"name":', headers: { 'Content-Type': 'application/json' } });
    expect(badJson.status).toBe(400);
    const notJson = await team().send('POST', path, { body: 'name=x', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(notJson.status).toBe(415);
    const huge = await team().send('POST', path, { body: JSON.stringify({ name: 'x', description: 'd'.repeat(1_100_000) }), headers: { 'Content-Type': 'application/json' } });
    expect(huge.status).toBe(413);
    for (const response of [badJson, notJson, huge]) expect(typeof response.body.message).toBe('string');
  });
});

describe('identity', () => {
  it('refuses a request without a signed identity, or with a forged one', async () => {
    const path = `/api/v1/teams/${TEAM}/organizations`;
    const anonymous = await request(service.app.http).get(path);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: 'Unauthenticated.', code: 'unauthenticated' });
    const forged = await request(service.app.http)
      .get(path)
      .set(signIdentity(signerOf(signingKeyPairs(), 'gateway'), 'GET', path, { teamId: TEAM, userId: 1, tokenId: 1 }));
    expect(forged.status).toBe(401);
    // A signature for one team's identity cannot be replayed with another team's id.
    const signed = signIdentity(service.identityKey, 'GET', path, { teamId: TEAM, userId: 1, tokenId: 1 });
    const tampered = await request(service.app.http)
      .get(path)
      .set({ ...signed, 'x-worklane-team-id': String(OTHER_TEAM) });
    expect(tampered.status).toBe(401);
  });

  it('labels request metrics with route templates, never ids', async () => {
    expect((await request(service.app.http).get('/metrics')).status).toBe(404);
    const metrics = await request(createMetricsServer(service.metrics)).get('/metrics');
    expect(metrics.text).toContain('route="/api/v1/teams/:team/organizations/:organization/projects"');
    expect(metrics.text).not.toMatch(/route="[^"]*\/\d+/);
  });
});
