// The ISSUE_EVENTS stream: its limits come from configuration, an existing stream is never weakened,
// and a full stream refuses publishes so that the relay backs off with the events kept in the
// outbox: nothing undelivered is dropped.
import { randomUUID } from 'node:crypto';
import { AckPolicy, RetentionPolicy } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createPool } from '@worklane/db';
import {
  DELIVERY_CONSUMER,
  DiscardPolicy,
  ISSUE_EVENTS_DEAD_LETTER_SUBJECT,
  ISSUE_EVENTS_STREAM,
  ensureDeliveryConsumer,
  ensureIssueEventsStream,
  jetstream,
  jetstreamManager,
  streamLimitsFrom,
} from '@worklane/messaging';
import { api, bootstrapTeam, freePorts, startNatsServer, startSystem, type NatsServer, type System } from '@worklane/testing';

const GIB = 1024 ** 3;

describe('declaring the stream', () => {
  let nats: NatsServer;
  let connection: NatsConnection;
  beforeAll(async () => {
    nats = await startNatsServer();
    connection = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await connection?.close();
    await nats?.stop();
  });

  it('creates it with the configured limits, never weakens it later, and strengthens it when configured to', async () => {
    const jsm = await jetstreamManager(connection);
    const configured = streamLimitsFrom({
      ISSUE_EVENTS_REPLICAS: 1,
      ISSUE_EVENTS_MAX_BYTES: 2 * GIB,
      ISSUE_EVENTS_MAX_MSGS: 50_000,
      ISSUE_EVENTS_MAX_AGE_HOURS: 48,
      ISSUE_EVENTS_DISCARD: 'new',
    });
    const created = await ensureIssueEventsStream(jsm, { limits: configured });
    expect(created.config).toMatchObject({
      max_bytes: 2 * GIB,
      max_msgs: 50_000,
      max_age: 48 * 3_600e9,
      discard: DiscardPolicy.New,
      retention: RetentionPolicy.Interest,
      num_replicas: 1,
    });
    expect(created.config.subjects).toContain(ISSUE_EVENTS_DEAD_LETTER_SUBJECT);
    // The delivery consumer exists from the start: with interest retention, a stream without it would keep nothing.
    expect((await jsm.consumers.info(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER)).name).toBe(DELIVERY_CONSUMER);

    const warnings: unknown[] = [];
    const logger = { warn: (fields: unknown) => warnings.push(fields), info: () => {}, error: () => {} };
    const weaker = streamLimitsFrom({
      ISSUE_EVENTS_REPLICAS: 1,
      ISSUE_EVENTS_MAX_BYTES: 1_048_576,
      ISSUE_EVENTS_MAX_MSGS: 1_000,
      ISSUE_EVENTS_MAX_AGE_HOURS: 1,
      ISSUE_EVENTS_DISCARD: 'old',
    });
    const kept = await ensureIssueEventsStream(jsm, { limits: weaker, logger });
    expect(kept.config).toMatchObject({ max_bytes: 2 * GIB, max_msgs: 50_000, max_age: 48 * 3_600e9, discard: DiscardPolicy.New });
    expect(warnings).toHaveLength(1);
    expect((warnings[0] as { kept: { limit: string }[] }).kept.map((entry) => entry.limit).sort()).toEqual(['discard', 'max_age', 'max_bytes', 'max_msgs']);

    const stronger = { ...configured, max_bytes: 4 * GIB, max_msgs: -1 };
    const raised = await ensureIssueEventsStream(jsm, { limits: stronger });
    expect(raised.config).toMatchObject({ max_bytes: 4 * GIB, max_msgs: -1 });
  });

  it('moves a stream declared the old way (limits retention, discard old, no dead-letter subject) to the new one', async () => {
    const jsm = await jetstreamManager(connection);
    await jsm.streams.delete(ISSUE_EVENTS_STREAM);
    await jsm.streams.add({
      name: ISSUE_EVENTS_STREAM,
      subjects: ['issues.created', 'issues.updated'],
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_bytes: GIB,
      num_replicas: 1,
    });
    await jsm.consumers.add(ISSUE_EVENTS_STREAM, {
      durable_name: DELIVERY_CONSUMER,
      ack_policy: AckPolicy.Explicit,
      filter_subjects: ['issues.created', 'issues.updated'],
      ack_wait: 7_000_000_000,
    });
    const info = await ensureIssueEventsStream(jsm);
    expect(info.config).toMatchObject({ retention: RetentionPolicy.Interest, discard: DiscardPolicy.New, max_bytes: GIB });
    expect(info.config.subjects).toEqual(expect.arrayContaining(['issues.created', 'issues.updated', ISSUE_EVENTS_DEAD_LETTER_SUBJECT]));
    // The issue service leaves an existing consumer to the delivery service, whose declaration adds
    // the notices to its filters (a release that did not know them would send them as events).
    expect((await jsm.consumers.info(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER)).config.filter_subjects).toEqual(['issues.created', 'issues.updated']);
    await ensureDeliveryConsumer(jsm, { ackWaitMs: 7_000 });
    const consumer = await jsm.consumers.info(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER);
    expect(consumer.config.filter_subjects).toEqual(['issues.created', 'issues.updated', ISSUE_EVENTS_DEAD_LETTER_SUBJECT]);
    expect(consumer.config.ack_wait).toBe(7_000_000_000);
  });
});

describe('a stream on a three-server NATS cluster', () => {
  let servers: NatsServer[] = [];
  let connection: NatsConnection;
  beforeAll(async () => {
    const routePorts = await freePorts(3);
    const routes = routePorts.map((port) => `nats://127.0.0.1:${port}`).join(',');
    servers = await Promise.all(
      routePorts.map((port, index) =>
        startNatsServer({ args: ['--server_name', `wl-${index}`, '--cluster_name', 'wl-test', '--cluster', `nats://127.0.0.1:${port}`, '--routes', routes] }),
      ),
    );
    connection = await connect({ servers: servers.map((server) => server.url) });
  }, 60_000);
  afterAll(async () => {
    await connection?.close();
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('never lowers the replicas of an existing stream, and logs that it kept them', async () => {
    let jsm!: Awaited<ReturnType<typeof jetstreamManager>>;
    const three = streamLimitsFrom({
      ISSUE_EVENTS_REPLICAS: 3,
      ISSUE_EVENTS_MAX_BYTES: GIB,
      ISSUE_EVENTS_MAX_MSGS: 10_000,
      ISSUE_EVENTS_MAX_AGE_HOURS: 24,
      ISSUE_EVENTS_DISCARD: 'new',
    });
    // The cluster elects its JetStream leader after the servers are up: declare once it answers.
    for (let attempt = 0; ; attempt += 1) {
      try {
        jsm = await jetstreamManager(connection, { timeout: 2_000 });
        await ensureIssueEventsStream(jsm, { limits: three });
        break;
      } catch (error) {
        if (attempt > 100) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    expect((await jsm.streams.info(ISSUE_EVENTS_STREAM)).config.num_replicas).toBe(3);

    const warnings: { kept: { limit: string; existing: unknown; configured: unknown }[] }[] = [];
    const logger = { warn: (fields: unknown) => warnings.push(fields as (typeof warnings)[number]), info: () => {}, error: () => {} };
    const info = await ensureIssueEventsStream(jsm, { limits: { ...three, num_replicas: 1 }, logger });
    expect(info.config.num_replicas).toBe(3);
    expect((await jsm.streams.info(ISSUE_EVENTS_STREAM)).config.num_replicas).toBe(3);
    expect(warnings.flatMap((warning) => warning.kept)).toEqual([{ limit: 'num_replicas', existing: 3, configured: 1 }]);
  });

  it('keeps serving with the stream as it is when the servers refuse a change (more replicas than servers)', async () => {
    const jsm = await jetstreamManager(connection);
    const errors: unknown[] = [];
    const logger = { warn: () => {}, info: () => {}, error: (fields: unknown) => errors.push(fields) };
    const limits = streamLimitsFrom({
      ISSUE_EVENTS_REPLICAS: 5,
      ISSUE_EVENTS_MAX_BYTES: GIB,
      ISSUE_EVENTS_MAX_MSGS: 10_000,
      ISSUE_EVENTS_MAX_AGE_HOURS: 24,
      ISSUE_EVENTS_DISCARD: 'new',
    });
    const info = await ensureIssueEventsStream(jsm, { limits, logger });
    expect(info.config.num_replicas).toBe(3);
    expect(errors).toHaveLength(1);
  });
});

describe('a full stream', () => {
  const MAX_BYTES = 65_536;
  let nats: NatsServer;
  let system: System;
  let connection: NatsConnection;

  beforeAll(async () => {
    nats = await startNatsServer();
    system = await startSystem({
      services: ['token', 'project', 'issue', 'gateway'],
      env: { NATS_URL: nats.url, LOG_LEVEL: 'error' },
      serviceEnv: { issue: { ISSUE_EVENTS_MAX_BYTES: MAX_BYTES, OUTBOX_POLL_INTERVAL_MS: 200 } },
    });
    connection = await connect({ servers: nats.url });
  }, 120_000);
  afterAll(async () => {
    await connection?.close();
    await system?.stop();
    await nats?.stop();
  });

  const metric = async (name: string) => {
    const text = await (await fetch(`${system.services.issue!.metricsUrl}/metrics`)).text();
    return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  };

  it('refuses publishes when full: the relay backs off, the events wait in the outbox, and all go out once there is room', async () => {
    const team = await bootstrapTeam(system, { teamName: 'Busy', organizationName: 'Busy org' });
    const client = api(system, team.token);
    const project = (await client.post(`/teams/${team.team_id}/organizations/${team.organization_id}/projects`, { name: 'Busy' })).body.id;
    const path = `/teams/${team.team_id}/organizations/${team.organization_id}/projects/${project}/issues`;

    // Nothing consumes the stream, so it fills up; ~150 events of ~700 bytes exceed 64 KiB. One
    // issue changes all along: its events must come out in the order they were made.
    const tracked = (await client.post(path, { title: 'Step 0' })).body.id as number;
    const issueIds: number[] = [tracked];
    const steps: string[] = [];
    for (let i = 1; i <= 150; i += 1) {
      const response = await client.post(path, { title: `Queued ${i}`, description: 'x'.repeat(300) });
      expect(response.status).toBe(201);
      issueIds.push(response.body.id);
      if (i % 10 === 0) {
        steps.push(`Step ${i}`);
        expect((await client.patch(`${path}/${tracked}`, { title: `Step ${i}` })).status).toBe(200);
      }
    }
    const jsm = await jetstreamManager(connection);
    for (let waited = 0; !((await metric('worklane_outbox_backlog')) > 0 && (await jsm.streams.info(ISSUE_EVENTS_STREAM)).state.messages > 0); waited += 100) {
      if (waited > 20_000) throw new Error('the stream never filled up');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const full = (await jsm.streams.info(ISSUE_EVENTS_STREAM)).state;
    expect(full.bytes).toBeLessThanOrEqual(MAX_BYTES);
    // Nothing was pushed out to make room: the first message is still the first one published.
    expect(full.first_seq).toBe(1);
    expect(await metric('worklane_stream_max_bytes')).toBe(MAX_BYTES);
    expect(await metric('worklane_stream_bytes')).toBeGreaterThan(0);
    expect(await metric('worklane_outbox_dead_lettered_total')).toBeNaN();

    // The delivery service's part: take and ack the events, which frees the stream.
    const consumer = await jetstream(connection).consumers.get(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER);
    const seen = new Map<number, number>();
    const trackedTitles: string[] = [];
    for (let waited = 0; seen.size < issueIds.length || trackedTitles.length < steps.length; waited += 1) {
      if (waited > 60) throw new Error(`only ${seen.size} of ${issueIds.length} events arrived`);
      const batch = await consumer.fetch({ max_messages: 100, expires: 1_000 });
      for await (const message of batch) {
        const { type, data } = message.json<{ type: string; data: { issue: { id: number; title: string } } }>();
        if (type === 'issue.created') seen.set(data.issue.id, (seen.get(data.issue.id) ?? 0) + 1);
        if (type === 'issue.updated' && data.issue.id === tracked) trackedTitles.push(data.issue.title);
        message.ack();
      }
    }
    expect([...seen.keys()].sort((a, b) => a - b)).toEqual([...issueIds].sort((a, b) => a - b));
    expect([...seen.values()].every((count) => count === 1)).toBe(true);
    expect(trackedTitles).toEqual(steps);
    for (let waited = 0; (await metric('worklane_outbox_backlog')) !== 0; waited += 100) {
      if (waited > 10_000) throw new Error('the outbox backlog did not drain');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it('never publishes a later event of an issue while another relay holds an earlier one, and goes on with other issues', async () => {
    const issueEnv = system.serviceEnv.issue;
    const pool = createPool({ url: issueEnv.DATABASE_URL as string, schema: issueEnv.DATABASE_SCHEMA as string, max: 2, applicationName: 'order-test' });
    try {
      // Outbox rows in the flat form the issue service records events in.
      const event = (issueId: number, title: string) => {
        const at = new Date().toISOString().replace('Z', '000Z');
        const issue = {
          id: issueId,
          project_id: 1,
          number: 1,
          reference_code: 'ORDER-1',
          title,
          description: null,
          url: null,
          type: 'task',
          status: 'todo',
          priority: 'none',
          assigned_to: null,
          estimated_date: null,
          created_by: 1,
          created_at: at,
          updated_at: at,
        };
        return JSON.stringify({ id: randomUUID(), event: 'issue.updated', created_at: at, team_id: 1, issue, changes: { title: { from: null, to: title } } });
      };
      const insert = async (payload: string, ageMs: number, heldForMs = 0) => {
        const id = JSON.parse(payload).id as string;
        await pool.query(
          `INSERT INTO outbox (id, subject, payload, created_at, claimed_until)
           VALUES ($1, 'issues.updated', $2, now() - make_interval(secs => $3), CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END)`,
          [id, payload, ageMs / 1000, heldForMs / 1000],
        );
        return id;
      };
      const published = async (id: string) => (await pool.query(`SELECT published_at IS NOT NULL AS done FROM outbox WHERE id = $1`, [id])).rows[0]?.done === true;
      const until = async (what: string, done: () => Promise<boolean>) => {
        for (let waited = 0; !(await done()); waited += 100) {
          if (waited > 15_000) throw new Error(`timed out waiting for ${what}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };

      // Another relay holds the first event of issue 900001 (its lease runs for a minute).
      const first = await insert(event(900_001, 'first'), 3_000, 60_000);
      const second = await insert(event(900_001, 'second'), 2_000);
      const other = await insert(event(900_002, 'other issue'), 1_000);
      await pool.query(`SELECT pg_notify('issue_outbox', '')`);
      await until("the other issue's event", () => published(other));
      expect(await published(second)).toBe(false);

      // The other relay gives the event back (it died, or its publish failed): both go out, in order.
      await pool.query(`UPDATE outbox SET claimed_until = NULL WHERE id = $1`, [first]);
      await pool.query(`SELECT pg_notify('issue_outbox', '')`);
      await until('both events of the issue', async () => (await published(first)) && (await published(second)));

      const consumer = await jetstream(connection).consumers.get(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER);
      const titles: string[] = [];
      for (let attempt = 0; titles.length < 2 && attempt < 20; attempt += 1) {
        const batch = await consumer.fetch({ max_messages: 10, expires: 1_000 });
        for await (const message of batch) {
          const { data } = message.json<{ data: { issue: { id: number; title: string } } }>();
          if (data.issue.id === 900_001) titles.push(data.issue.title);
          message.ack();
        }
      }
      expect(titles).toEqual(['first', 'second']);
    } finally {
      await pool.end();
    }
  });
});
