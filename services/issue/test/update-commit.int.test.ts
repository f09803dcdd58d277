// An issue update against a real PostgreSQL: read, work out the changes, then one compare-and-set
// statement that writes them with their issue.updated event. The event commits in that statement
// (no transaction held open across turns of the event loop), and `changes.from` stays exact
// however many updates of the issue run at the same moment.
import type { Pool } from '@worklane/db';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { IssueStore, type ProjectScope } from '../src/data/issues';

jest.setTimeout(60_000);

let database: ServiceDatabase;
let pool: Pool;
let issues: IssueStore;
/** The statements the store ran through pool.query (first word or prepared name), and its own checkouts (transactions). */
const statements: string[] = [];
let checkouts = 0;

beforeAll(async () => {
  database = await createServiceDatabase('issue');
  pool = database.pool('update-commit-test', { max: 12 });
  const name = (first: string | { name?: string; text: string }) => (typeof first === 'string' ? first : (first.name ?? first.text)).trim().split(/\s+/)[0]!;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    statements.push(name(args[0] as string | { name?: string; text: string }));
    return query(...args);
  };
  // A connection checked out by the caller (no callback: withTransaction's), not by pool.query.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
    if (args.length === 0) checkouts += 1;
    return connect(...args);
  };
  issues = new IssueStore(pool);
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

let nextProject = 1;
const newProject = (): ProjectScope => ({ teamId: 1, organizationId: 1, projectId: nextProject++ });

/** The issue.updated events of an issue, in commit order, as the outbox holds them. */
async function updatesOf(issueId: number): Promise<{ changes: Record<string, { from: unknown; to: unknown }>; issue: { title: string; status: string } }[]> {
  const { rows } = await pool.query<{ payload: string }>(
    `SELECT payload FROM outbox WHERE subject = 'issues.updated' AND (payload::json->'issue'->>'id')::bigint = $1 ORDER BY created_at, id`,
    [issueId],
  );
  return rows.map((row) => JSON.parse(row.payload));
}

it('commits an update and its event in one statement, with no transaction', async () => {
  const scope = newProject();
  const issue = await issues.create(scope, 'ONE', 1, { title: 'before' });
  statements.length = 0;
  checkouts = 0;
  const updated = await issues.update(scope, issue.id, { title: 'after', status: 'in_progress' });
  expect(updated).toMatchObject({ id: issue.id, title: 'after', status: 'in_progress' });
  // One read, one write, and no transaction of its own.
  expect(statements).toHaveLength(2);
  expect(checkouts).toBe(0);
  const [event] = await updatesOf(issue.id);
  expect(event!.changes).toEqual({ title: { from: 'before', to: 'after' }, status: { from: 'triage', to: 'in_progress' } });
  expect(event!.issue).toMatchObject({ title: 'after', status: 'in_progress' });
});

it('writes nothing and fires no event when nothing changes', async () => {
  const scope = newProject();
  const issue = await issues.create(scope, 'SAME', 1, { title: 'same', priority: 'high' });
  const unchanged = await issues.update(scope, issue.id, { title: 'same', priority: 'high' });
  expect(unchanged).toEqual(issue);
  expect(await updatesOf(issue.id)).toEqual([]);
  expect(await issues.update({ ...scope, projectId: scope.projectId + 1_000 }, issue.id, { title: 'elsewhere' })).toBeUndefined();
});

it('keeps changes.from exact under concurrent updates of one issue: each event starts where the one before it ended', async () => {
  const scope = newProject();
  const issue = await issues.create(scope, 'RACE', 1, { title: 'title 0' });
  const titles = Array.from({ length: 12 }, (_, index) => `title ${index + 1}`);
  const statuses = ['todo', 'in_progress', 'done'] as const;
  await Promise.all([
    ...titles.map((title) => issues.update(scope, issue.id, { title })),
    ...statuses.map((status, index) => issues.update(scope, issue.id, { status, title: titles[index * 4]! })),
  ]);
  const events = await updatesOf(issue.id);
  let title: unknown = 'title 0';
  let status: unknown = 'triage';
  for (const event of events) {
    if (event.changes.title) {
      expect(event.changes.title.from).toBe(title);
      title = event.changes.title.to;
    }
    if (event.changes.status) {
      expect(event.changes.status.from).toBe(status);
      status = event.changes.status.to;
    }
    // Each event carries the issue as its change left it.
    expect(event.issue).toMatchObject({ title, status });
  }
  const final = await issues.find(scope, issue.id);
  expect(final).toMatchObject({ title, status });
  // Every request that asked for a title took effect in turn: the titles changed at least once each
  // time a request found another title in place.
  expect(events.length).toBeGreaterThanOrEqual(titles.length);
});

it('takes the row lock at once when the compare-and-set writes are configured away, and after that many misses otherwise', async () => {
  const scope = newProject();
  const issue = await issues.create(scope, 'LOCK', 1, { title: 'first' });
  const locking = new IssueStore(pool, undefined, { optimisticUpdateAttempts: 0 });
  checkouts = 0;
  expect(await locking.update(scope, issue.id, { title: 'second' })).toMatchObject({ title: 'second' });
  // No compare-and-set write: the update ran in a transaction of its own, under the row lock.
  expect(checkouts).toBe(1);

  // One compare-and-set write that misses (the issue changes between its read and its write), then the row lock.
  const once = new IssueStore(pool, undefined, { optimisticUpdateAttempts: 1 });
  let interfered = false;
  const find = once.find.bind(once);
  once.find = async (...args: Parameters<typeof once.find>) => {
    const found = await find(...args);
    if (!interfered) {
      interfered = true;
      await issues.update(scope, issue.id, { title: 'meanwhile' });
    }
    return found;
  };
  checkouts = 0;
  expect(await once.update(scope, issue.id, { title: 'third' })).toMatchObject({ title: 'third' });
  expect(checkouts).toBe(1);
  const events = await updatesOf(issue.id);
  expect(events.map((event) => event.changes.title)).toEqual([
    { from: 'first', to: 'second' },
    { from: 'second', to: 'meanwhile' },
    { from: 'meanwhile', to: 'third' },
  ]);
});
