// The issue API through the gateway, and the events it writes: exactly one JetStream message per
// change, published from the outbox by any number of relaying replicas.
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { createPool } from '@worklane/db';
import { ISSUE_EVENTS_DEAD_LETTER_SUBJECT, ISSUE_EVENTS_STREAM, jetstream, jetstreamManager, readDeadLetterNotice, readIssueEvent } from '@worklane/messaging';
import { api, bootstrapTeam, startNatsServer, startSystem, type ApiClient, type BootstrapResult, type NatsServer, type System } from '@worklane/testing';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const ISSUE_FIELDS = [
  'assigned_to',
  'created_at',
  'created_by',
  'description',
  'estimated_date',
  'id',
  'number',
  'priority',
  'project_id',
  'reference_code',
  'status',
  'title',
  'type',
  'updated_at',
  'url',
];

let nats: NatsServer;
let system: System;
let connection: NatsConnection;
let team: BootstrapResult;
let other: BootstrapResult;
let client: ApiClient;
let projectId: number;

const issuesPath = (project = projectId, organization = team.organization_id, teamId = team.team_id) => `/teams/${teamId}/organizations/${organization}/projects/${project}/issues`;

async function newProject(owner: BootstrapResult, name: string): Promise<number> {
  const response = await api(system, owner.token).post(`/teams/${owner.team_id}/organizations/${owner.organization_id}/projects`, { name });
  expect(response.status).toBe(201);
  return response.body.id;
}

beforeAll(async () => {
  // A NATS server of our own: the stream name is global to a server.
  nats = await startNatsServer();
  system = await startSystem({ services: ['token', 'project', 'issue', 'gateway'], env: { NATS_URL: nats.url, LOG_LEVEL: 'warn' } });
  [team, other] = await Promise.all([
    bootstrapTeam(system, { teamName: 'Issues', organizationName: 'Issues org' }),
    bootstrapTeam(system, { email: 'other@example.com', teamName: 'Other', organizationName: 'Other org' }),
  ]);
  client = api(system, team.token);
  projectId = await newProject(team, 'Backend API');
  connection = await connect({ servers: nats.url });
}, 120_000);

afterAll(async () => {
  await connection?.close();
  await system?.stop();
  await nats?.stop();
});

/** Every message in ISSUE_EVENTS so far, with its Nats-Msg-Id. */
async function streamMessages(): Promise<{ subject: string; msgId: string | undefined; traceparent: string | undefined; payload: any }[]> {
  const jsm = await jetstreamManager(connection);
  const { state } = await jsm.streams.info(ISSUE_EVENTS_STREAM);
  if (state.messages === 0) return [];
  const consumer = await jetstream(connection).consumers.get(ISSUE_EVENTS_STREAM);
  const messages = [];
  const batch = await consumer.fetch({ max_messages: state.messages, expires: 2_000 });
  for await (const message of batch) {
    messages.push({
      subject: message.subject,
      msgId: message.headers?.get('Nats-Msg-Id'),
      traceparent: message.headers?.get('traceparent') || undefined,
      payload: message.json(),
    });
    if (messages.length === state.messages) break;
  }
  return messages;
}

async function eventsOf(issueId: number) {
  return (await streamMessages()).filter((message) => message.payload.data?.issue?.id === issueId);
}

async function waitForEvents(issueId: number, count: number) {
  for (let waited = 0; ; waited += 100) {
    const events = await eventsOf(issueId);
    if (events.length >= count) return events;
    if (waited > 15_000) throw new Error(`expected ${count} events for issue ${issueId}, saw ${events.length}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('issue API', () => {
  it('creates an issue with the defaults, a per-project number and a reference code, returned bare', async () => {
    const response = await client.post(issuesPath(), { title: '  Login fails  ', id: 99, number: 7, created_by: 42 });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(ISSUE_FIELDS);
    expect(response.body).toMatchObject({
      project_id: projectId,
      number: 1,
      reference_code: 'BACKENDAPI-1',
      title: 'Login fails',
      description: null,
      url: null,
      type: 'task',
      status: 'triage',
      priority: 'none',
      assigned_to: null,
      estimated_date: null,
      created_by: team.user_id,
    });
    expect(response.body.id).not.toBe(99);
    expect(response.body.created_at).toMatch(TIMESTAMP);
    expect(response.body.updated_at).toBe(response.body.created_at);
  });

  it('numbers issues densely per project, even under concurrent creates', async () => {
    const project = await newProject(team, 'web-app v2');
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => client.post(issuesPath(project), { title: `Parallel ${i}` })));
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(201));
    expect(responses.map((response) => response.body.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(responses.map((response) => response.body.reference_code)).size).toBe(20);
    expect(responses[0]!.body.reference_code).toMatch(/^WEBAPPV2-\d+$/);
  });

  it('lists the issues of the project newest first under data, and reads one', async () => {
    const project = await newProject(team, 'Listing');
    const first = (await client.post(issuesPath(project), { title: 'First', type: 'bug' })).body;
    const second = (await client.post(issuesPath(project), { title: 'Second', type: 'feature' })).body;
    const list = await client.get(issuesPath(project));
    expect(list.status).toBe(200);
    // Paged by default: the next cursor beside the data, null on the last page.
    expect(list.body).toEqual({ data: [second, first], next_cursor: null });
    const one = await client.get(`${issuesPath(project)}/${first.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(first);
    expect((await client.get(`${issuesPath()}/${first.id}`)).status).toBe(404);
  });

  it('updates only the fields sent and leaves an unchanged issue untouched', async () => {
    const created = (await client.post(issuesPath(), { title: 'Patch me', description: 'Old', priority: 'low' })).body;
    const patched = await client.patch(`${issuesPath()}/${created.id}`, {
      status: 'in_review',
      estimated_date: '2026-06-30',
      url: 'https://github.com/acme/api/pull/7',
      assigned_to: team.user_id,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      title: 'Patch me',
      description: 'Old',
      priority: 'low',
      status: 'in_review',
      estimated_date: '2026-06-30',
      url: 'https://github.com/acme/api/pull/7',
      assigned_to: team.user_id,
      number: created.number,
      created_at: created.created_at,
    });
    expect(patched.body.updated_at).not.toBe(created.updated_at);

    const same = await client.patch(`${issuesPath()}/${created.id}`, { status: 'in_review', priority: 'low' });
    expect(same.status).toBe(200);
    expect(same.body.updated_at).toBe(patched.body.updated_at);

    const cleared = await client.patch(`${issuesPath()}/${created.id}`, { description: null, assigned_to: null });
    expect(cleared.body).toMatchObject({ description: null, assigned_to: null });
  });

  it('answers invalid input with 422 and per-field messages, and changes nothing', async () => {
    const missing = await client.post(issuesPath(), { description: 'no title' });
    expect(missing.status).toBe(422);
    expect(missing.body).toEqual({ message: 'The title field is required.', code: 'validation_failed', errors: { title: ['The title field is required.'] } });

    const wrong = await client.post(issuesPath(), { title: 'x', type: 'epic', status: 7, estimated_date: '2026-02-30', url: 'javascript:alert(1)' });
    expect(wrong.status).toBe(422);
    expect(Object.keys(wrong.body.errors).sort()).toEqual(['estimated_date', 'status', 'type', 'url']);

    const created = (await client.post(issuesPath(), { title: 'Stays' })).body;
    const nullTitle = await client.patch(`${issuesPath()}/${created.id}`, { title: null, status: 'done' });
    expect(nullTitle.status).toBe(422);
    expect((await client.get(`${issuesPath()}/${created.id}`)).body).toEqual(created);

    const notMember = await client.patch(`${issuesPath()}/${created.id}`, { assigned_to: other.user_id });
    expect(notMember.status).toBe(422);
    expect(Object.keys(notMember.body.errors)).toEqual(['assigned_to']);
  });

  it('answers 404 for projects outside the organization or team, and 403 for another team', async () => {
    const otherProject = await newProject(other, 'Theirs');
    expect((await client.get(issuesPath(otherProject))).status).toBe(404);
    expect((await client.post(issuesPath(otherProject), { title: 'x' })).status).toBe(404);
    expect((await client.get(issuesPath(projectId, other.organization_id))).status).toBe(404);
    expect((await client.get(issuesPath(999_999))).status).toBe(404);
    expect((await client.get(`${issuesPath()}/abc`)).body).toEqual({ message: 'Not found.', code: 'not_found' });
    const forbidden = await client.get(issuesPath(otherProject, other.organization_id, other.team_id));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({ message: 'This action is unauthorized.', code: 'forbidden' });
    expect((await client.request('DELETE', issuesPath())).status).toBe(405);
  });
});

describe('issue events', () => {
  it('publishes issue.created and issue.updated with the event id as Nats-Msg-Id, and nothing for a no-op', async () => {
    const issue = (await client.post(issuesPath(), { title: 'Evented' })).body;
    await client.patch(`${issuesPath()}/${issue.id}`, { title: 'Evented' });
    await client.patch(`${issuesPath()}/${issue.id}`, { priority: 'urgent' });
    const events = await waitForEvents(issue.id, 2);
    expect(events.map((event) => event.subject)).toEqual(['issues.created', 'issues.updated']);
    for (const event of events) expect(event.msgId).toBe(event.payload.id);
    expect(events[0]!.payload).toEqual({
      id: events[0]!.msgId,
      type: 'issue.created',
      version: 1,
      occurred_at: issue.created_at,
      team_id: team.team_id,
      organization_id: team.organization_id,
      data: { issue },
    });
    expect(events[1]!.payload).toMatchObject({ type: 'issue.updated', version: 1, data: { changes: { priority: { from: 'none', to: 'urgent' } } } });
    expect(Object.keys(events[1]!.payload.data.changes)).toEqual(['priority']);
    // Each message is an envelope that the package's parser (the delivery service's) reads.
    for (const event of events) expect(readIssueEvent(JSON.stringify(event.payload))).toMatchObject({ ok: true, form: 'envelope' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await eventsOf(issue.id)).toHaveLength(2);
  });

  it('publishes outbox rows an earlier release wrote (events and dead-letter notices in the flat form) as envelopes', async () => {
    const issueEnv = system.serviceEnv.issue;
    const pool = createPool({ url: issueEnv.DATABASE_URL as string, schema: issueEnv.DATABASE_SCHEMA as string, max: 1, applicationName: 'upgrade-test' });
    try {
      // Literal rows in the format the outbox and the bus had before the envelope.
      const eventId = randomUUID();
      const noticeId = randomUUID();
      const eventRow =
        `{"id":"${eventId}","event":"issue.created","created_at":"2026-03-02T10:15:30.123456Z","team_id":${team.team_id},` +
        '"issue":{"id":990001,"project_id":1,"number":1,"reference_code":"OLD-1","title":"Written before the envelope","description":null,' +
        '"url":null,"type":"task","status":"triage","priority":"none","assigned_to":null,"estimated_date":null,"created_by":1,' +
        '"created_at":"2026-03-02T10:15:30.123456Z","updated_at":"2026-03-02T10:15:30.123456Z"}}';
      const noticeRow =
        `{"id":"${noticeId}","event":"issue.updated","created_at":"2026-03-02T10:15:31.000000Z","team_id":${team.team_id},` +
        '"issue":{"id":990002,"project_id":1,"number":2,"reference_code":"OLD-2"},' +
        '"dead_letter":{"reason":"payload_too_large","detail":"too large","size_bytes":2000000}}';
      await pool.query(`INSERT INTO outbox (id, subject, payload) VALUES ($1, 'issues.created', $2), ($3, $4, $5)`, [
        eventId,
        eventRow,
        noticeId,
        ISSUE_EVENTS_DEAD_LETTER_SUBJECT,
        noticeRow,
      ]);
      await pool.query(`SELECT pg_notify('issue_outbox', '')`);

      let published: Awaited<ReturnType<typeof streamMessages>> = [];
      for (let waited = 0; published.length < 2; waited += 100) {
        if (waited > 15_000) throw new Error(`the rows were not published (saw ${published.length})`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        published = (await streamMessages()).filter((message) => message.msgId === eventId || message.msgId === noticeId);
      }
      const event = published.find((message) => message.msgId === eventId)!;
      expect(event.subject).toBe('issues.created');
      expect(event.payload).toEqual({
        id: eventId,
        type: 'issue.created',
        version: 1,
        occurred_at: '2026-03-02T10:15:30.123456Z',
        team_id: team.team_id,
        data: { issue: JSON.parse(eventRow).issue },
      });
      const notice = published.find((message) => message.msgId === noticeId)!;
      expect(notice.subject).toBe(ISSUE_EVENTS_DEAD_LETTER_SUBJECT);
      expect(notice.payload).toEqual({
        id: noticeId,
        type: 'issue.updated',
        version: 1,
        occurred_at: '2026-03-02T10:15:31.000000Z',
        team_id: team.team_id,
        data: { issue: { id: 990002, project_id: 1, number: 2, reference_code: 'OLD-2' }, dead_letter: { reason: 'payload_too_large', detail: 'too large', size_bytes: 2000000 } },
      });
      expect(readDeadLetterNotice(JSON.stringify(notice.payload)).ok).toBe(true);
    } finally {
      await pool.end();
    }
  });

  it('relays from several replicas without publishing any event twice', async () => {
    const second = await system.startService('issue');
    const project = await newProject(team, 'Relayed');
    const before = (await streamMessages()).length;
    const published = async (url: string) => Number(/^worklane_outbox_published_total(?:\{[^}]*\})? (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
    const publishedBefore = (await published(system.services.issue!.metricsUrl)) + (await published(second.metricsUrl));

    const created = await Promise.all(Array.from({ length: 30 }, (_, i) => client.post(issuesPath(project), { title: `Relay ${i}` })));
    expect(created.every((response) => response.status === 201)).toBe(true);
    for (let waited = 0; (await streamMessages()).length < before + 30; waited += 100) {
      if (waited > 15_000) throw new Error('events were not published');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const publishedAfter = (await published(system.services.issue!.metricsUrl)) + (await published(second.metricsUrl));
    expect(publishedAfter - publishedBefore).toBe(30);
    expect((await streamMessages()).length).toBe(before + 30);
    await second.stop();
  });
});
