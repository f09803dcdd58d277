// The outbox relay against a real PostgreSQL and NATS JetStream, with relays on pools of their own
// standing for the relays of several issue replicas. A relay marks what it published in its next
// claim; these tests show what that means when a relay dies in between, that replicas side by side
// still publish every event once and each issue's events in order, and that retention keeps up.
// Time is moved by rewriting rows (a lease run out, a row made older), never by sleeping.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Pool } from '@worklane/db';
import { ISSUE_EVENTS_STREAM, ensureIssueEventsStream, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@worklane/messaging';
import { createLogger } from '@worklane/observability';
import { createServiceDatabase, startNatsServer, type NatsServer, type ServiceDatabase } from '@worklane/testing';
import { IssueStore, OUTBOX_CHANNEL, type ProjectScope } from '../src/data/issues';
import { handOverWhileIdle } from '../src/events/handover-gate';
import { OutboxRelay, RELAY_SESSION_SETTINGS, type OutboxRelayOptions } from '../src/events/relay';

jest.setTimeout(120_000);

let database: ServiceDatabase;
let nats: NatsServer;
let connection: NatsConnection;
let jsm: JetStreamManager;
let pool: Pool;
let issues: IssueStore;
const logger = createLogger('relay-test', 'silent');

beforeAll(async () => {
  database = await createServiceDatabase('issue');
  pool = database.pool('relay-test', { max: 8 });
  issues = new IssueStore(pool);
  nats = await startNatsServer();
  connection = await connect({ servers: nats.url });
  jsm = await jetstreamManager(connection);
  await ensureIssueEventsStream(jsm);
}, 120_000);

afterAll(async () => {
  await connection?.close();
  await nats?.stop();
  await database?.drop();
});

/** A relay on a pool of its own, as a replica's relay runs; `claims()` counts its claim statements. */
function newRelay(options: Partial<OutboxRelayOptions> = {}) {
  const relayPool = database.pool('relay-test-relay', { max: 3, settings: RELAY_SESSION_SETTINGS });
  let claims = 0;
  const query = relayPool.query.bind(relayPool) as (...args: unknown[]) => unknown;
  (relayPool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    if ((args[0] as { name?: string }).name === 'outbox-mark-and-claim') claims += 1;
    return query(...args);
  };
  let published = 0;
  const relay = new OutboxRelay({
    pool: relayPool,
    js: jetstream(connection),
    logger,
    batchSize: 100,
    pollIntervalMs: 100,
    retentionMs: 3_600_000,
    deadLetterRetentionMs: 86_400_000,
    maxPayload: () => connection.info?.max_payload ?? 1_048_576,
    onPublished: (count) => (published += count),
    ...options,
  });
  return { relay, relayPool, published: () => published, claims: () => claims };
}

let nextProject = 1;
const newProject = (): ProjectScope => ({ teamId: 1, organizationId: 1, projectId: nextProject++ });

/** The events on the stream, oldest first: id and issue title of each. */
/** A pool for the API's statements that records, by name, which way each create went. */
function apiPoolNamingCreates() {
  const apiPool = database.pool('relay-test-api', { max: 2 });
  const creates: string[] = [];
  const query = apiPool.query.bind(apiPool) as (...args: unknown[]) => unknown;
  (apiPool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const name = (args[0] as { name?: string }).name;
    if (name?.startsWith('issue-create')) creates.push(name);
    return query(...args);
  };
  return { apiPool, creates };
}

async function streamEvents(): Promise<{ id: string; issueId: number; title: string }[]> {
  const { state } = await jsm.streams.info(ISSUE_EVENTS_STREAM);
  const events = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq += 1) {
    const message = await jsm.streams.getMessage(ISSUE_EVENTS_STREAM, { seq });
    if (!message) continue;
    const { id, data } = message.json<{ id: string; data: { issue: { id: number; title: string } } }>();
    events.push({ id, issueId: data.issue.id, title: data.issue.title });
  }
  return events;
}

/** Waits until `done` holds (checked every 50 ms, for at most 30 s). */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  for (let waited = 0; !(await done()); waited += 50) {
    if (waited > 30_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const outboxRows = async (ids: string[]) =>
  (
    await pool.query<{ id: string; published: boolean; leased: boolean }>(
      `SELECT id, published_at IS NOT NULL AS published, coalesce(claimed_until > now(), false) AS leased FROM outbox WHERE id = ANY($1::uuid[]) ORDER BY created_at`,
      [ids],
    )
  ).rows;

/** The outbox ids of the events of the issues created or changed since `after` (an outbox row count). */
const eventIdsOf = async (issueIds: number[]) =>
  (await pool.query<{ id: string }>(`SELECT id FROM outbox WHERE order_key = ANY($1::text[]) ORDER BY created_at`, [issueIds.map(String)])).rows.map((row) => row.id);

it('marks a published batch in its next claim, and what is left at stop', async () => {
  const { relay } = newRelay();
  const scope = newProject();
  const first = await issues.create(scope, 'MARK', 1, { title: 'first' });
  expect(await relay.publishBatch()).toBe(1);
  const [firstEvent] = await eventIdsOf([first.id]);
  // On the stream, still leased in the outbox: the next claim marks it.
  expect((await streamEvents()).some((event) => event.id === firstEvent)).toBe(true);
  expect(await outboxRows([firstEvent!])).toEqual([{ id: firstEvent, published: false, leased: true }]);

  const second = await issues.create(scope, 'MARK', 1, { title: 'second' });
  expect(await relay.publishBatch()).toBe(1);
  const [secondEvent] = await eventIdsOf([second.id]);
  expect(await outboxRows([firstEvent!, secondEvent!])).toEqual([
    { id: firstEvent, published: true, leased: false },
    { id: secondEvent, published: false, leased: true },
  ]);

  await relay.stop();
  expect(await outboxRows([secondEvent!])).toEqual([{ id: secondEvent, published: true, leased: false }]);
});

it('publishes again, once, the events of a relay that died between publishing and marking them', async () => {
  const dying = newRelay();
  const scope = newProject();
  const issue = await issues.create(scope, 'CRASH', 1, { title: 'step 0' });
  await issues.update(scope, issue.id, { title: 'step 1' });
  await issues.update(scope, issue.id, { title: 'step 2' });
  const ids = await eventIdsOf([issue.id]);
  expect(ids).toHaveLength(3);
  expect(await dying.relay.publishBatch()).toBe(3);
  // The process dies: its connections close, its marks are never written.
  await dying.relayPool.end();
  expect((await outboxRows(ids)).map((row) => [row.published, row.leased])).toEqual([
    [false, true],
    [false, true],
    [false, true],
  ]);

  const survivor = newRelay();
  // Still leased by the dead relay: nothing of the issue is taken.
  expect(await survivor.relay.publishBatch()).toBe(0);
  // The lease runs out.
  await pool.query(`UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [ids]);
  expect(await survivor.relay.publishBatch()).toBe(3);
  await survivor.relay.stop();
  expect((await outboxRows(ids)).every((row) => row.published && !row.leased)).toBe(true);

  // JetStream kept one copy of each event (the second publish had the same Nats-Msg-Id), in order.
  const onStream = (await streamEvents()).filter((event) => ids.includes(event.id));
  expect(onStream.map((event) => event.id)).toEqual(ids);
  expect(onStream.map((event) => event.title)).toEqual(['step 0', 'step 1', 'step 2']);
});

it('publishes every event once, and each issue’s events in commit order, with two relays side by side', async () => {
  const replicas = [newRelay({ batchSize: 4 }), newRelay({ batchSize: 4 })];
  for (const replica of replicas) replica.relay.start();
  const scope = newProject();
  const STEPS = 12;
  const ISSUES = 6;
  // Each issue is created and changed step by step, the issues side by side, while both relays run.
  const issueIds = await Promise.all(
    Array.from({ length: ISSUES }, async (_, index) => {
      const issue = await issues.create(scope, 'PAIR', 1, { title: `issue ${index} step 0` });
      for (let step = 1; step <= STEPS; step += 1) await issues.update(scope, issue.id, { title: `issue ${index} step ${step}` });
      return issue.id;
    }),
  );
  const ids = await eventIdsOf(issueIds);
  expect(ids).toHaveLength(ISSUES * (STEPS + 1));
  await until('every event published and marked', async () => (await outboxRows(ids)).every((row) => row.published));
  await Promise.all(replicas.map((replica) => replica.relay.stop()));

  const onStream = (await streamEvents()).filter((event) => ids.includes(event.id));
  expect(onStream).toHaveLength(ids.length);
  expect(new Set(onStream.map((event) => event.id)).size).toBe(ids.length);
  issueIds.forEach((issueId, index) => {
    const titles = onStream.filter((event) => event.issueId === issueId).map((event) => event.title);
    expect(titles).toEqual(Array.from({ length: STEPS + 1 }, (_, step) => `issue ${index} step ${step}`));
  });
  expect(replicas.reduce((sum, replica) => sum + replica.published(), 0)).toBeGreaterThanOrEqual(ids.length);
});

it('removes expired published rows and dead letters batch after batch until none is left', async () => {
  const { relay } = newRelay({ retentionBatchSize: 10 });
  await pool.query(`DELETE FROM outbox WHERE published_at IS NOT NULL`);
  const insert = (count: number, publishedAgo: string) =>
    pool.query(
      `INSERT INTO outbox (id, subject, payload, created_at, published_at)
       SELECT gen_random_uuid(), 'issues.created', '{}', now() - $2::interval, now() - $2::interval FROM generate_series(1, $1)`,
      [count, publishedAgo],
    );
  await insert(25, '2 hours');
  await insert(3, '1 minute');
  await pool.query(
    `INSERT INTO outbox_dead_letters (id, subject, payload, reason, detail, created_at, dead_lettered_at)
     SELECT gen_random_uuid(), 'issues.created', '{}', 'invalid_event', 'test', now() - interval '2 days', now() - interval '2 days' FROM generate_series(1, 12)`,
  );
  const results = [];
  for (let pass = 0; pass < 10; pass += 1) {
    const result = await relay.removeExpired();
    results.push(result);
    if (result === 'idle') break;
  }
  expect(results).toEqual(['more', 'more', 'idle']);
  const left = await pool.query<{ published: number; dead: number }>(
    `SELECT (SELECT count(*)::int FROM outbox WHERE published_at IS NOT NULL) AS published, (SELECT count(*)::int FROM outbox_dead_letters) AS dead`,
  );
  expect(left.rows[0]).toEqual({ published: 3, dead: 0 });
});

describe('creates handed to their own relay', () => {
  it('publishes a create’s event as soon as it commits, without a claim, and marks the events together', async () => {
    const replica = newRelay({ pollIntervalMs: 60_000 });
    replica.relay.start();
    const store = new IssueStore(pool, replica.relay.committedEventPublisher());
    const scope = newProject();
    const created = await Promise.all(Array.from({ length: 30 }, (_, index) => store.create(scope, 'DIRECT', 1, { title: `direct ${index}` })));
    const ids = await eventIdsOf(created.map((issue) => issue.id));
    expect(ids).toHaveLength(30);
    await until('the events marked published', async () => (await outboxRows(ids)).every((row) => row.published && !row.leased));
    const onStream = (await streamEvents()).filter((event) => ids.includes(event.id));
    expect(onStream).toHaveLength(30);
    expect(replica.published()).toBe(30);
    // No claim took them: the passes ran only to mark them, a few statements for all 30.
    expect(replica.claims()).toBeLessThan(30);
    await replica.relay.stop();
  });

  it('keeps an issue’s later events behind its create’s event', async () => {
    const replica = newRelay({ pollIntervalMs: 60_000 });
    replica.relay.start();
    const store = new IssueStore(pool, replica.relay.committedEventPublisher());
    const scope = newProject();
    const issue = await store.create(scope, 'NEXT', 1, { title: 'step 0' });
    await store.update(scope, issue.id, { title: 'step 1' });
    await store.update(scope, issue.id, { title: 'step 2' });
    const ids = await eventIdsOf([issue.id]);
    await until('the three events published and marked', async () => (await outboxRows(ids)).every((row) => row.published));
    await replica.relay.stop();
    const onStream = (await streamEvents()).filter((event) => ids.includes(event.id));
    expect(onStream.map((event) => event.title)).toEqual(['step 0', 'step 1', 'step 2']);
  });

  it('while the relay cannot publish, leaves the next creates’ events to the queue; all go out once it can', async () => {
    const real = jetstream(connection);
    let natsAway = true;
    const js = {
      publish: (...args: Parameters<JetStreamClient['publish']>) => (natsAway ? Promise.reject(new Error('NATS is away')) : real.publish(...args)),
    } as unknown as JetStreamClient;
    const replica = newRelay({ pollIntervalMs: 60_000, js, maxBackoffMs: 200 });
    replica.relay.start();
    const { apiPool, creates } = apiPoolNamingCreates();
    const store = new IssueStore(apiPool, replica.relay.committedEventPublisher());
    const scope = newProject();
    const first = await store.create(scope, 'AWAY', 1, { title: 'first' });
    const firstIds = await eventIdsOf([first.id]);
    // Its publish failed: the row is back in the queue, unleased.
    await until('the first event released', async () => (await outboxRows(firstIds))[0]?.leased === false);
    const second = await store.create(scope, 'AWAY', 1, { title: 'second' });
    expect(creates).toEqual(['issue-create-direct', 'issue-create']);
    natsAway = false;
    const ids = await eventIdsOf([first.id, second.id]);
    await until('both events published and marked', async () => (await outboxRows(ids)).every((row) => row.published));
    const third = await store.create(scope, 'AWAY', 1, { title: 'third' });
    expect(creates).toEqual(['issue-create-direct', 'issue-create', 'issue-create-direct']);
    const all = await eventIdsOf([first.id, second.id, third.id]);
    await until('the third event published and marked', async () => (await outboxRows(all)).every((row) => row.published));
    await replica.relay.stop();
    expect((await streamEvents()).filter((event) => all.includes(event.id)).map((event) => event.title)).toEqual(['first', 'second', 'third']);
  });

  it('hands an event it cannot publish at once to the relay’s queue, which publishes it', async () => {
    const real = jetstream(connection);
    let refused = 0;
    const js = {
      publish: (...args: Parameters<JetStreamClient['publish']>) => {
        if (refused === 0) {
          refused += 1;
          return Promise.reject(new Error('NATS is away for a moment'));
        }
        return real.publish(...args);
      },
    } as unknown as JetStreamClient;
    const replica = newRelay({ pollIntervalMs: 60_000, js });
    replica.relay.start();
    const store = new IssueStore(pool, replica.relay.committedEventPublisher());
    const issue = await store.create(newProject(), 'RETRY', 1, { title: 'refused once' });
    const ids = await eventIdsOf([issue.id]);
    await until('the refused event published and marked', async () => (await outboxRows(ids)).every((row) => row.published));
    await replica.relay.stop();
    expect(refused).toBe(1);
    expect((await streamEvents()).filter((event) => ids.includes(event.id))).toHaveLength(1);
  });

  it('while the API thread is kept busy, leaves creates’ events to the relay’s claim (woken by their commit), in order with their issues’ later events', async () => {
    const replica = newRelay({ pollIntervalMs: 60_000 });
    replica.relay.start();
    const { apiPool, creates } = apiPoolNamingCreates();
    // The API thread's recent event loop utilization, as the gate reads it.
    let utilization = 0.9;
    const store = new IssueStore(
      apiPool,
      handOverWhileIdle(replica.relay.committedEventPublisher(), 0.15, () => utilization),
    );
    const scope = newProject();
    const busy = await store.create(scope, 'BUSY', 1, { title: 'busy 0' });
    await store.update(scope, busy.id, { title: 'busy 1' });
    utilization = 0.05;
    const idle = await store.create(scope, 'BUSY', 1, { title: 'idle 0' });
    await store.update(scope, idle.id, { title: 'idle 1' });
    expect(creates).toEqual(['issue-create', 'issue-create-direct']);
    const ids = await eventIdsOf([busy.id, idle.id]);
    expect(ids).toHaveLength(4);
    // The busy create's event had no hand-over: the claim the commit's notification started took it.
    await until('the four events published and marked', async () => (await outboxRows(ids)).every((row) => row.published));
    await replica.relay.stop();
    const onStream = (await streamEvents()).filter((event) => ids.includes(event.id));
    expect(onStream.filter((event) => event.issueId === busy.id).map((event) => event.title)).toEqual(['busy 0', 'busy 1']);
    expect(onStream.filter((event) => event.issueId === idle.id).map((event) => event.title)).toEqual(['idle 0', 'idle 1']);
    expect(replica.published()).toBe(4);
  });

  it('leaves the event of a process that died before publishing it to any relay once its lease runs out', async () => {
    // The create commits, then its process dies before its relay publishes the event.
    const store = new IssueStore(pool, { leaseSeconds: 15, ready: () => true, publish: () => {} });
    const issue = await store.create(newProject(), 'DIED', 1, { title: 'never handed over' });
    const ids = await eventIdsOf([issue.id]);
    expect(await outboxRows(ids)).toEqual([{ id: ids[0], published: false, leased: true }]);
    const survivor = newRelay();
    expect(await survivor.relay.publishBatch()).toBe(0);
    await pool.query(`UPDATE outbox SET claimed_until = now() - interval '1 second' WHERE id = ANY($1::uuid[])`, [ids]);
    expect(await survivor.relay.publishBatch()).toBe(1);
    await survivor.relay.stop();
    expect((await outboxRows(ids))[0]).toMatchObject({ published: true, leased: false });
    expect((await streamEvents()).filter((event) => ids.includes(event.id)).map((event) => event.title)).toEqual(['never handed over']);
  });
});

it('publishes the events of one issue in commit order when they fall in the same millisecond', async () => {
  const { relay } = newRelay();
  const scope = newProject();
  const issue = await issues.create(scope, 'SAMEMS', 1, { title: 'step 0' });
  await issues.update(scope, issue.id, { title: 'step 1' });
  await issues.update(scope, issue.id, { title: 'step 2' });
  const ids = await eventIdsOf([issue.id]);
  expect(ids).toHaveLength(3);
  // Commit times 100 µs apart within one millisecond, written newest first so that the table
  // holds them in the reverse of their order.
  for (const [index, id] of [...ids.entries()].reverse()) {
    await pool.query(`UPDATE outbox SET created_at = timestamptz '2000-01-01 00:00:00.000100+00' + make_interval(secs => $2::float8 / 10000) WHERE id = $1`, [id, index]);
  }
  expect(await relay.publishBatch()).toBeGreaterThanOrEqual(3);
  await relay.stop();
  const onStream = (await streamEvents()).filter((event) => ids.includes(event.id));
  expect(onStream.map((event) => event.title)).toEqual(['step 0', 'step 1', 'step 2']);
});

describe('the LISTEN connection', () => {
  /** The backends of this database whose last statement was `statement` (by default the relay's LISTEN). */
  const listeners = async (statement = `LISTEN ${OUTBOX_CHANNEL}`) =>
    (await pool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = $1`, [statement])).rows.map((row) => row.pid);

  it('is opened again when PostgreSQL ends it, and the relay is woken by commits again', async () => {
    const replica = newRelay({ pollIntervalMs: 60_000 });
    replica.relay.start();
    await until('the relay listening', async () => (await listeners()).length === 1);
    const [first] = await listeners();
    // A FATAL error on the idle connection, then its end: the relay lets it go once, and listens again.
    await pool.query('SELECT pg_terminate_backend($1)', [first]);
    await until('the relay listening on a new connection', async () => {
      const now = await listeners();
      return now.length === 1 && now[0] !== first;
    });
    const scope = newProject();
    const issue = await issues.create(scope, 'RELISTEN', 1, { title: 'created' });
    await issues.update(scope, issue.id, { title: 'changed' });
    const ids = await eventIdsOf([issue.id]);
    // Not handed over and no poll for a minute: only the notification of their commits wakes the relay.
    await until('both events published', async () => (await outboxRows(ids)).every((row) => row.published));
    await replica.relay.stop();
  });

  it('is closed when the relay stops, not handed back to the pool', async () => {
    const replica = newRelay({ pollIntervalMs: 60_000 });
    replica.relay.start();
    await until('the relay listening', async () => (await listeners()).length === 1);
    const clients = replica.relayPool.totalCount;
    await replica.relay.stop();
    // Removed from the pool at once (a connection handed back would stay in it, idle, with the
    // relay's error handler still on it), and its backend exits.
    expect(replica.relayPool.totalCount).toBe(clients - 1);
    await until('the LISTEN connection closed', async () => (await listeners(`UNLISTEN ${OUTBOX_CHANNEL}`)).length === 0 && (await listeners()).length === 0);
  });
});
