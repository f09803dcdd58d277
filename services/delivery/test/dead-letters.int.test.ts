// An event that can never be published (larger than NATS's max_payload) must not hold up anyone:
// the relay moves it aside, the team sees it in its delivery log as dead-lettered, and every
// other event, of other teams and later ones of the same issue, is delivered.
import { randomUUID } from 'node:crypto';
import { createPool, type Pool } from '@worklane/db';
import { createIssue, createWebhook, eventually, payloadOf, startDeliverySystem, updateIssue, type DeliverySystem, type TestTeam } from './support/system';

let env: DeliverySystem;
let issueDb: Pool;
let victim: TestTeam;
let poisoner: TestTeam;

beforeAll(async () => {
  env = await startDeliverySystem();
  [victim, poisoner] = await Promise.all([env.newTeam('Victim'), env.newTeam('Poisoner')]);
  const issueEnv = env.system.serviceEnv.issue;
  issueDb = createPool({ url: issueEnv.DATABASE_URL as string, schema: issueEnv.DATABASE_SCHEMA as string, max: 2, applicationName: 'dead-letter-test' });
}, 120_000);
afterAll(async () => {
  await issueDb?.end();
  await env?.stop();
});

const metric = async (url: string, pattern: RegExp) => Number(pattern.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);

/**
 * Writes an issue.updated event of about 1.2 MB for `issueId` straight into the outbox, as an
 * issue with an enormous description would have made it before input limits existed.
 */
async function insertPoisonEvent(team: TestTeam, issue: Record<string, unknown>): Promise<string> {
  const id = randomUUID();
  const description = '\u0001'.repeat(200_000);
  const payload = JSON.stringify({
    id,
    event: 'issue.updated',
    created_at: new Date().toISOString().replace('Z', '000Z'),
    team_id: team.team_id,
    issue: { ...issue, description },
    changes: { description: { from: null, to: description } },
  });
  expect(Buffer.byteLength(payload)).toBeGreaterThan(1024 * 1024);
  await issueDb.query(`INSERT INTO outbox (id, subject, payload) VALUES ($1, 'issues.updated', $2)`, [id, payload]);
  await issueDb.query(`SELECT pg_notify('issue_outbox', '')`);
  return id;
}

it("dead-letters an event too large for the bus, shows it in its team's delivery log, and delivers every other event", async () => {
  const { receiver } = env;
  const poisonHook = await createWebhook(poisoner, { url: receiver.url('/poisoner'), events: ['issue.created', 'issue.updated'] });
  await createWebhook(victim, { url: receiver.url('/victim'), events: ['issue.created'] });
  const issue = await createIssue(poisoner, { title: 'Poisoned issue' });
  await receiver.waitFor(() => receiver.at('/poisoner').some((request) => payloadOf(request).issue.id === issue.id));

  const poisonId = await insertPoisonEvent(poisoner, issue);
  // A later event of the same issue, and an event of another team, both behind the poison.
  await updateIssue(poisoner, issue.id, { priority: 'low' });
  const victimIssue = await createIssue(victim, { title: 'Unaffected' });

  await receiver.waitFor(() => receiver.at('/victim').some((request) => payloadOf(request).issue.id === victimIssue.id), 20_000, "the other team's event");
  await receiver.waitFor(
    () => receiver.at('/poisoner').some((request) => payloadOf(request).event === 'issue.updated' && payloadOf(request).changes?.priority?.to === 'low'),
    20_000,
    'the later event of the same issue',
  );
  // The poison itself never reaches a receiver...
  expect([...receiver.at('/poisoner'), ...receiver.at('/victim')].filter((request) => payloadOf(request).id === poisonId)).toEqual([]);

  // ...but its team sees it in the delivery log, with the reason.
  const log = await eventually(
    async () => (await poisoner.client.get(`/teams/${poisoner.team_id}/webhooks/${poisonHook.id}/deliveries`)).body.data as Record<string, unknown>[],
    (entries) => entries.some((entry) => entry.event_id === poisonId),
    20_000,
    'the dead-letter entry in the delivery log',
  );
  const entry = log.find((candidate) => candidate.event_id === poisonId)!;
  expect(entry).toMatchObject({ event: 'issue.updated', status: 'failed', failure_reason: 'dead_lettered', attempt_count: 0, next_attempt_at: null });
  const detail = (await poisoner.client.get(`/teams/${poisoner.team_id}/deliveries/${entry.id}`)).body;
  expect(detail.attempts).toEqual([]);
  expect(detail.payload).toMatchObject({ id: poisonId, event: 'issue.updated', team_id: poisoner.team_id, issue: { id: issue.id }, dead_letter: { reason: 'payload_too_large' } });
  expect(detail.payload.issue.description).toBeUndefined();
  // There is nothing to redeliver: the event itself was never published.
  const redelivery = await poisoner.client.post(`/teams/${poisoner.team_id}/deliveries/${entry.id}/redeliver`, {});
  expect(redelivery.status).toBe(409);
  // The other team's log knows nothing of it.
  const victimHooks = (await victim.client.get(`/teams/${victim.team_id}/webhooks`)).body.data as { id: number }[];
  for (const hook of victimHooks) {
    const entries = (await victim.client.get(`/teams/${victim.team_id}/webhooks/${hook.id}/deliveries`)).body.data as { event_id: string }[];
    expect(entries.filter((candidate) => candidate.event_id === poisonId)).toEqual([]);
  }

  const issueUrl = env.system.services.issue!.metricsUrl;
  expect(await metric(issueUrl, /^worklane_outbox_dead_lettered_total\{[^}]*reason="payload_too_large"[^}]*\} (\d+)$/m)).toBe(1);
  expect(await metric(issueUrl, /^worklane_outbox_backlog(?:\{[^}]*\})? (\d+)$/m)).toBe(0);
  const { rows } = await issueDb.query(`SELECT reason, team_id::int AS team_id, octet_length(payload) AS size FROM outbox_dead_letters WHERE id = $1`, [poisonId]);
  expect(rows).toEqual([{ reason: 'payload_too_large', team_id: poisoner.team_id, size: expect.any(Number) }]);
  expect(rows[0].size).toBeGreaterThan(1024 * 1024);
});

it('dead-letters a malformed outbox row without a notice and goes on', async () => {
  const id = randomUUID();
  await issueDb.query(`INSERT INTO outbox (id, subject, payload) VALUES ($1, 'issues.created', 'not json')`, [id]);
  await issueDb.query(`SELECT pg_notify('issue_outbox', '')`);
  const rows = await eventually(
    async () => (await issueDb.query(`SELECT reason FROM outbox_dead_letters WHERE id = $1`, [id])).rows,
    (found) => found.length === 1,
    20_000,
    'the malformed row in outbox_dead_letters',
  );
  expect(rows).toEqual([{ reason: 'invalid_event' }]);
  const issue = await createIssue(victim, { title: 'After the malformed row' });
  await env.receiver.waitFor(() => env.receiver.at('/victim').some((request) => payloadOf(request).issue.id === issue.id));
  const { rows: outbox } = await issueDb.query(`SELECT published_at IS NOT NULL AS done FROM outbox WHERE id = $1`, [id]);
  expect(outbox).toEqual([{ done: true }]);
});
