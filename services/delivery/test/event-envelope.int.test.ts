// The bus carries events in the typed envelope of packages/messaging; receivers get the webhook
// body they always had. During a rolling upgrade the stream may still hold messages an earlier
// issue service published in the flat format: this release delivers them unchanged. A message no
// schema accepts is dropped without stopping the consumer.
import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DELIVERY_CONSUMER, ISSUE_EVENTS_DEAD_LETTER_SUBJECT, ISSUE_EVENTS_STREAM, jetstream, jetstreamManager } from '@worklane/messaging';
import { deliveryId } from '../src/domain/delivery';
import { signatureProblems } from './support/signatures';
import { createIssue, createWebhook, eventually, payloadOf, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

const SECRET = 'an-envelope-test-signing-key';

let env: DeliverySystem;
let team: TestTeam;
let connection: NatsConnection;
let webhook: { id: number };

beforeAll(async () => {
  env = await startDeliverySystem();
  team = await env.newTeam('Envelope team');
  webhook = await createWebhook(team, { url: env.receiver.url('/envelope'), events: ['issue.created', 'issue.updated'], secret: SECRET });
  connection = await connect({ servers: env.nats.url });
}, 120_000);
afterAll(async () => {
  await connection?.close();
  await env?.stop();
});

const received = () => env.receiver.at('/envelope');
const receivedEvent = (eventId: string) => received().find((request) => payloadOf(request).id === eventId);

/** An issue.created message exactly as the issue service published it before the envelope. */
const previousFormat = (eventId: string, issueId: number) =>
  `{"id":"${eventId}","event":"issue.created","created_at":"2026-03-02T10:15:30.123456Z","team_id":${team.team_id},` +
  `"issue":{"id":${issueId},"project_id":${team.projectId},"number":77,"reference_code":"BACKENDAPI-77","title":"Published by the previous release",` +
  '"description":"Line one\\nand \\"two\\"","url":null,"type":"bug","status":"triage","priority":"none","assigned_to":null,"estimated_date":null,' +
  `"created_by":${team.user_id},"created_at":"2026-03-02T10:15:30.123456Z","updated_at":"2026-03-02T10:15:30.123456Z"}}`;

it('delivers an event published as an envelope with the webhook body and headers receivers always had', async () => {
  const issue = await createIssue(team, { title: 'Through the envelope' });
  await env.receiver.waitFor(() => received().some((request) => payloadOf(request).issue?.id === issue.id));
  const request = received().find((candidate) => payloadOf(candidate).issue?.id === issue.id)!;
  const body = payloadOf(request);
  expect(Object.keys(body)).toEqual(['id', 'event', 'created_at', 'team_id', 'issue']);
  expect(body).toMatchObject({ event: 'issue.created', created_at: issue.updated_at, team_id: team.team_id, issue });
  expect(request.headers['x-webhook-event']).toBe('issue.created');
  expect(request.headers['x-webhook-delivery']).toBe(deliveryId(body.id, webhook.id));
  expect(signatureProblems(request, SECRET)).toEqual([]);
});

it('delivers a message in the format published before the envelope, byte for byte', async () => {
  const eventId = randomUUID();
  const message = previousFormat(eventId, 990_001);
  await jetstream(connection).publish('issues.created', message, { msgID: eventId });
  await env.receiver.waitFor(() => receivedEvent(eventId) !== undefined, 20_000, 'the previous-format event');
  const request = receivedEvent(eventId)!;
  expect(request.body.toString('utf8')).toBe(message);
  expect(request.headers['x-webhook-event']).toBe('issue.created');
  expect(request.headers['x-webhook-delivery']).toBe(deliveryId(eventId, webhook.id));
  expect(signatureProblems(request, SECRET)).toEqual([]);
});

it('records a dead-letter notice in the previous format in the delivery log, as before', async () => {
  const eventId = randomUUID();
  const notice =
    `{"id":"${eventId}","event":"issue.updated","created_at":"2026-03-02T10:15:31.000000Z","team_id":${team.team_id},` +
    '"issue":{"id":990002,"project_id":1,"number":2,"reference_code":"OLD-2"},' +
    '"dead_letter":{"reason":"payload_too_large","detail":"too large","size_bytes":2000000}}';
  await jetstream(connection).publish(ISSUE_EVENTS_DEAD_LETTER_SUBJECT, notice, { msgID: eventId });
  const entries = await eventually(
    async () => (await team.client.get(`/teams/${team.team_id}/webhooks/${webhook.id}/deliveries`)).body.data as { id: string; event_id: string }[],
    (found) => found.some((entry) => entry.event_id === eventId),
    20_000,
    'the dead-letter entry',
  );
  const entry = entries.find((candidate) => candidate.event_id === eventId)!;
  const detail = (await team.client.get(`/teams/${team.team_id}/deliveries/${entry.id}`)).body;
  expect(detail).toMatchObject({ event: 'issue.updated', status: 'failed', failure_reason: 'dead_lettered', attempt_count: 0 });
  expect(detail.payload).toEqual(JSON.parse(notice));
  expect(receivedEvent(eventId)).toBeUndefined();
});

it('drops a message no schema accepts (an unknown version, a malformed event) and goes on with the next', async () => {
  const js = jetstream(connection);
  const unknownVersion = randomUUID();
  const malformed = randomUUID();
  const after = randomUUID();
  await js.publish(
    'issues.created',
    JSON.stringify({ id: unknownVersion, type: 'issue.created', version: 99, occurred_at: '2026-03-02T10:15:30.123456Z', team_id: team.team_id, data: {} }),
    { msgID: unknownVersion },
  );
  await js.publish(
    'issues.created',
    JSON.stringify({ id: malformed, event: 'issue.created', created_at: '2026-03-02T10:15:30.123456Z', team_id: team.team_id, issue: { id: 'x' } }),
    { msgID: malformed },
  );
  await js.publish('issues.created', previousFormat(after, 990_003), { msgID: after });
  await env.receiver.waitFor(() => receivedEvent(after) !== undefined, 20_000, 'the event after the invalid ones');
  expect(receivedEvent(unknownVersion)).toBeUndefined();
  expect(receivedEvent(malformed)).toBeUndefined();
  // Neither is waiting to be offered again: the consumer terminated them.
  const jsm = await jetstreamManager(connection);
  await eventually(
    async () => (await jsm.consumers.info(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER)).num_ack_pending,
    (pending) => pending === 0,
    20_000,
    'no message left unacknowledged',
  );
});
