// The largest issue the API accepts still makes events that fit the bus: an issue and an update of
// it with every text at its limit, made of the characters JSON spends most bytes on, are published
// on NATS (whose max_payload is 1 MiB) like any other.
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { api, bootstrapTeam, startNatsServer, startSystem, type BootstrapResult, type NatsServer, type System } from '@worklane/testing';
import { ISSUE_TEXT_LIMITS } from '../src/domain/issue';

jest.setTimeout(120_000);

let nats: NatsServer;
let system: System;
let connection: NatsConnection;
let team: BootstrapResult;

beforeAll(async () => {
  nats = await startNatsServer();
  system = await startSystem({ services: ['token', 'project', 'issue', 'gateway'], env: { NATS_URL: nats.url, LOG_LEVEL: 'warn' } });
  team = await bootstrapTeam(system, { teamName: 'Sizes', organizationName: 'Sizes org' });
  connection = await connect({ servers: nats.url });
});

afterAll(async () => {
  await connection?.close();
  await system?.stop();
  await nats?.stop();
});

/** The first message on `subject` whose event is about `issueId`, as the bus carried it. */
async function nextEventOf(subscription: Subscription, issueId: number): Promise<Uint8Array> {
  for await (const message of subscription) {
    if (message.json<{ data: { issue: { id: number } } }>().data.issue.id === issueId) return message.data;
  }
  throw new Error('subscription closed');
}

it('publishes issue.created and issue.updated for an issue whose every text is at its limit', async () => {
  const client = api(system, team.token);
  const project = await client.post(`/teams/${team.team_id}/organizations/${team.organization_id}/projects`, { name: 'P'.repeat(255) });
  expect(project.status).toBe(201);
  const issues = `/teams/${team.team_id}/organizations/${team.organization_id}/projects/${project.body.id}/issues`;
  const url = (fill: string) => `https://example.com/${fill.repeat(ISSUE_TEXT_LIMITS.url - 20)}`;
  const worst = (fill: string) => ({ title: fill.repeat(ISSUE_TEXT_LIMITS.title), description: fill.repeat(ISSUE_TEXT_LIMITS.description) });

  const created = connection.subscribe('issues.created');
  const updated = connection.subscribe('issues.updated');
  const issue = await client.post(issues, { ...worst('\u0001'), url: url('\u0001') });
  expect(issue.status).toBe(201);
  const createdEvent = await nextEventOf(created, issue.body.id);

  const patch = await client.patch(`${issues}/${issue.body.id}`, { ...worst('\u001f'), url: url('\u001f') });
  expect(patch.status).toBe(200);
  const updatedEvent = await nextEventOf(updated, issue.body.id);

  const { data: parsed } = JSON.parse(Buffer.from(updatedEvent).toString('utf8'));
  expect(parsed.changes.description.from).toHaveLength(ISSUE_TEXT_LIMITS.description);
  expect(parsed.changes.description.to).toHaveLength(ISSUE_TEXT_LIMITS.description);
  // Three copies of every text at 6 bytes a character: large, and still far from 1 MiB.
  expect(updatedEvent.length).toBeGreaterThan(3 * 6 * ISSUE_TEXT_LIMITS.description);
  expect(updatedEvent.length).toBeLessThan(768 * 1024);
  expect(createdEvent.length).toBeLessThan(updatedEvent.length);
});
