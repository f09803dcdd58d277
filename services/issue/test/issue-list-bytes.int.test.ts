// A page of the issue list is read from PostgreSQL by its byte budget as well as its row count:
// the store reads only the issues that may fit in the page, and the one after them, so a page of
// large issues never makes the service hold the whole row count of them.
import type { Pool } from '@worklane/db';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { IssueStore, type ProjectScope } from '../src/data/issues';

jest.setTimeout(60_000);

let database: ServiceDatabase;
let pool: Pool;
let issues: IssueStore;

beforeAll(async () => {
  database = await createServiceDatabase('issue');
  pool = database.pool('issue-list-bytes-test', { max: 4 });
  issues = new IssueStore(pool);
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

let nextProject = 1;
const newProject = (): ProjectScope => ({ teamId: 1, organizationId: 1, projectId: nextProject++ });

/** Issues created one after another; their ids, oldest first. */
async function createIssues(scope: ProjectScope, descriptions: string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const [index, description] of descriptions.entries()) ids.push((await issues.create(scope, 'BIG', 1, { title: `Issue ${index}`, description })).id);
  return ids;
}

it('reads the issues that may fit in the budget and the one after them, newest first', async () => {
  const scope = newProject();
  const ids = await createIssues(
    scope,
    Array.from({ length: 10 }, () => 'd'.repeat(20_000)),
  );
  const newestFirst = [...ids].reverse();
  // Three issues of about 20,000 bytes are below 65,536 bytes together; a fourth is not.
  const page = await issues.list(scope, { take: 11, maxBytes: 65_536 });
  expect(page.map((issue) => issue.id)).toEqual(newestFirst.slice(0, 5));
  // From a cursor, the same.
  const next = await issues.list(scope, { take: 11, beforeId: newestFirst[2], maxBytes: 65_536 });
  expect(next.map((issue) => issue.id)).toEqual(newestFirst.slice(3, 8));
});

it('reads whole row counts of small issues, and every issue without a budget', async () => {
  const scope = newProject();
  const ids = await createIssues(
    scope,
    Array.from({ length: 6 }, (_, index) => `small ${index}`),
  );
  expect(await issues.list(scope, { take: 4, maxBytes: 65_536 })).toHaveLength(4);
  expect(await issues.list(scope, { take: 20, maxBytes: 65_536 })).toHaveLength(6);
  const large = await createIssues(scope, ['x'.repeat(32_768), 'y'.repeat(32_768), 'z'.repeat(32_768)]);
  expect((await issues.list(scope, { take: 20 })).map((issue) => issue.id)).toEqual([...ids, ...large].reverse());
});

it('always reads two issues, however far the first is past the budget', async () => {
  const scope = newProject();
  const ids = await createIssues(scope, ['a'.repeat(32_768), 'b'.repeat(32_768), 'c'.repeat(32_768)]);
  const page = await issues.list(scope, { take: 3, maxBytes: 1_000 });
  expect(page.map((issue) => issue.id)).toEqual([ids[2], ids[1]]);
  expect(page[0]!.description).toBe('c'.repeat(32_768));
});

it('counts bytes, not characters: four-byte characters fill the budget four times as fast', async () => {
  const scope = newProject();
  // 5,000 characters of U+1F600 are 20,000 bytes each.
  const ids = await createIssues(
    scope,
    Array.from({ length: 8 }, () => '\u{1F600}'.repeat(5_000)),
  );
  const page = await issues.list(scope, { take: 9, maxBytes: 65_536 });
  expect(page.map((issue) => issue.id)).toEqual([...ids].reverse().slice(0, 5));
});
