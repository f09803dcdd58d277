// A page of an organization's projects is read from PostgreSQL by its byte budget as well as its
// row count (boundedPageQuery): only the projects that may fit in the page, and the one after them.
// The whole-set list reads as before, and an organization that is not the team's stays unknown.
import type { Pool } from '@worklane/db';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { createOrganization } from '../src/data/organizations';
import { createProject, listProjects, type ProjectScope } from '../src/data/projects';

jest.setTimeout(60_000);

let database: ServiceDatabase;
let pool: Pool;

beforeAll(async () => {
  database = await createServiceDatabase('project');
  pool = database.pool('project-list-bytes-test', { max: 4 });
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

/** A new organization of team 1 with projects of these descriptions; their ids, oldest first. */
async function organizationWith(descriptions: string[]): Promise<{ scope: ProjectScope; ids: number[] }> {
  const organization = await createOrganization(pool, 1, `Organization ${Math.random()}`, 1_000);
  const scope = { teamId: 1, organizationId: organization.id };
  const ids: number[] = [];
  for (const [index, description] of descriptions.entries()) ids.push((await createProject(pool, scope, { name: `Project ${index}`, description }, 1_000))!.id);
  return { scope, ids };
}

it('reads the projects that may fit in the budget and the one after them, in creation order', async () => {
  const { scope, ids } = await organizationWith(Array.from({ length: 8 }, () => 'd'.repeat(9_000)));
  // Three projects of about 9,000 bytes are below 30,000 bytes together; a fourth is not.
  const page = await listProjects(pool, scope, { take: 9, maxBytes: 30_000 });
  expect(page?.map((project) => project.id)).toEqual(ids.slice(0, 5));
  const next = await listProjects(pool, scope, { take: 9, afterId: ids[2], maxBytes: 30_000 });
  expect(next?.map((project) => project.id)).toEqual(ids.slice(3, 8));
  // Without a budget (the whole-set list's batches), the row count alone.
  expect((await listProjects(pool, scope, { take: 7 }))?.map((project) => project.id)).toEqual(ids.slice(0, 7));
});

it('tells an organization past its last project from one that is not the team’s', async () => {
  const { scope, ids } = await organizationWith(['one', 'two']);
  expect(await listProjects(pool, scope, { take: 3, afterId: ids[1], maxBytes: 30_000 })).toEqual([]);
  expect(await listProjects(pool, { ...scope, teamId: 2 }, { take: 3, maxBytes: 30_000 })).toBeUndefined();
});
