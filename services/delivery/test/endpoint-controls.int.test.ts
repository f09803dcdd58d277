// A webhook's scope (organizations, projects), its rate limit and the per-issue order, through the
// whole system: issues created and changed through the gateway, deliveries received by a real HTTPS
// receiver and read back from the delivery log. Waits are on conditions only.
import type { ReceivedRequest } from './support/receiver';
import { createIssue, eventually, payloadOf, startDeliverySystem, updateIssue, type DeliverySystem, type TestTeam } from './support/system';

jest.setTimeout(180_000);

/** A later event of an issue waits at most this long for an earlier one being retried. */
const ORDER_WAIT_MS = 20_000;

let env: DeliverySystem;
let team: TestTeam;

beforeAll(async () => {
  // A retry one second after the first failure, the next a minute later.
  env = await startDeliverySystem({ retrySchedule: '0,1,60', delivery: { DELIVERY_ORDER_WAIT_MAX_MS: ORDER_WAIT_MS } });
  team = await env.newTeam('Controls');
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

interface LoggedDelivery {
  id: string;
  event: string;
  status: string;
  attempt_count: number;
  issue_id: number | null;
  out_of_order: boolean;
}

async function createWebhook(path: string, settings: Record<string, unknown> = {}): Promise<{ id: number }> {
  const response = await team.client.post(`/teams/${team.team_id}/webhooks`, { url: env.receiver.url(path), events: ['issue.created', 'issue.updated'], ...settings });
  if (response.status !== 201) throw new Error(`creating a webhook failed: ${response.status} ${response.text}`);
  return response.body;
}

async function logOf(webhookId: number): Promise<LoggedDelivery[]> {
  const response = await team.client.get(`/teams/${team.team_id}/webhooks/${webhookId}/deliveries?limit=200`);
  expect(response.status).toBe(200);
  return response.body.data;
}

async function createIn(organizationId: number, projectId: number, title: string): Promise<{ id: number }> {
  const response = await team.client.post(`/teams/${team.team_id}/organizations/${organizationId}/projects/${projectId}/issues`, { title });
  if (response.status !== 201) throw new Error(`creating an issue failed: ${response.status} ${response.text}`);
  return response.body;
}

const issueIdOf = (request: ReceivedRequest) => payloadOf(request).issue?.id as number | undefined;
/** What a received request was: `created` or the fields an update changed. */
const describeRequest = (request: ReceivedRequest) => {
  const body = payloadOf(request);
  return body.event === 'issue.created' ? 'created' : `updated:${Object.keys(body.changes ?? {}).join(',')}`;
};

describe('scope', () => {
  it('delivers to a scoped webhook only the events of its organizations and projects, and logs nothing of the others', async () => {
    const otherOrganization = await team.client.post(`/teams/${team.team_id}/organizations`, { name: 'Second organization' });
    expect(otherOrganization.status).toBe(201);
    const secondProject = await team.client.post(`/teams/${team.team_id}/organizations/${team.organization_id}/projects`, { name: 'Second project' });
    const elsewhere = await team.client.post(`/teams/${team.team_id}/organizations/${otherOrganization.body.id}/projects`, { name: 'Elsewhere' });
    expect([secondProject.status, elsewhere.status]).toEqual([201, 201]);

    const everything = await createWebhook('/scope/all');
    const firstOrganization = await createWebhook('/scope/organization', { filters: { organization_ids: [team.organization_id] } });
    const secondProjectOnly = await createWebhook('/scope/project', { filters: { project_ids: [secondProject.body.id] } });
    // Both lists must match: the first project is not in the other organization.
    const neither = await createWebhook('/scope/none', { filters: { organization_ids: [otherOrganization.body.id], project_ids: [team.projectId] } });

    const inFirst = await createIn(team.organization_id, team.projectId, 'Scoped: first project');
    const inSecond = await createIn(team.organization_id, secondProject.body.id, 'Scoped: second project');
    const inOther = await createIn(otherOrganization.body.id, elsewhere.body.id, 'Scoped: other organization');

    // Every event is fanned out to every webhook at once: once the unscoped webhook has all three,
    // the others' deliveries exist too (or never will).
    const all = [inFirst.id, inSecond.id, inOther.id];
    await env.receiver.waitFor((requests) => all.every((id) => requests.some((request) => request.path === '/scope/all' && issueIdOf(request) === id)));
    await eventually(
      () => logOf(firstOrganization.id),
      (log) => log.length === 2 && log.every((delivery) => delivery.status === 'succeeded'),
      20_000,
      'the organization-scoped webhook to receive its two events',
    );

    const issuesIn = async (webhookId: number) => (await logOf(webhookId)).map((delivery) => delivery.issue_id).sort();
    expect(await issuesIn(everything.id)).toEqual([...all].sort());
    expect(await issuesIn(firstOrganization.id)).toEqual([inFirst.id, inSecond.id].sort());
    expect(await issuesIn(secondProjectOnly.id)).toEqual([inSecond.id]);
    expect(await logOf(neither.id)).toEqual([]);
    const received = (path: string) => env.receiver.at(path).map(issueIdOf).sort();
    expect(received('/scope/organization')).toEqual([inFirst.id, inSecond.id].sort());
    expect(received('/scope/none')).toEqual([]);
  });
});

describe('per-issue order', () => {
  it("sends an issue's updates after its creation even when the creation needed a retry, and other issues meanwhile", async () => {
    // The first attempt of the creation of "Ordered" fails; everything else succeeds.
    let failedOnce = false;
    env.receiver.on('/ordered', (request) => {
      const body = payloadOf(request);
      if (!failedOnce && body.event === 'issue.created' && body.issue?.title === 'Ordered') {
        failedOnce = true;
        return { status: 500, body: 'not yet' };
      }
      return { status: 200 };
    });
    const webhook = await createWebhook('/ordered');
    const ordered = await createIssue(team, { title: 'Ordered' });
    await updateIssue(team, ordered.id, { status: 'todo' });
    await updateIssue(team, ordered.id, { priority: 'high' });
    const other = await createIssue(team, { title: 'Other issue' });

    const ofIssue = (id: number) => env.receiver.at('/ordered').filter((request) => issueIdOf(request) === id);
    await env.receiver.waitFor(() => ofIssue(ordered.id).length >= 4, 30_000, 'the issue’s four requests');
    expect(ofIssue(ordered.id).map(describeRequest)).toEqual(['created', 'created', 'updated:status', 'updated:priority']);
    expect(ofIssue(other.id).map(describeRequest)).toEqual(['created']);

    // The receiver has the last request before the pipeline records its attempt: wait until all
    // three deliveries are finished in the log, then look at how they ended.
    const log = await eventually(
      () => logOf(webhook.id),
      (entries) => entries.filter((delivery) => delivery.issue_id === ordered.id && delivery.status !== 'pending').length === 3,
      20_000,
      "the issue's three deliveries to be finished in the log",
    );
    const ofOrdered = log.filter((delivery) => delivery.issue_id === ordered.id);
    expect(ofOrdered).toHaveLength(3);
    expect(ofOrdered.every((delivery) => delivery.status === 'succeeded' && !delivery.out_of_order)).toBe(true);
  });

  it('lets a later event go ahead, marked out_of_order, once it has waited DELIVERY_ORDER_WAIT_MAX_MS; other issues never wait', async () => {
    // The creation of "Stuck" fails every time; its next retry is a minute away.
    env.receiver.on('/bounded', (request) => {
      const body = payloadOf(request);
      return body.event === 'issue.created' && body.issue?.title === 'Stuck' ? { status: 500, body: 'no' } : { status: 200 };
    });
    const webhook = await createWebhook('/bounded');
    const stuck = await createIssue(team, { title: 'Stuck' });
    await updateIssue(team, stuck.id, { status: 'in_progress' });
    const other = await createIssue(team, { title: 'Not stuck' });

    const ofIssue = (id: number) => env.receiver.at('/bounded').filter((request) => issueIdOf(request) === id);
    // Another issue's event is not held up: it arrives while the update still waits.
    await env.receiver.waitFor(() => ofIssue(other.id).length === 1, 15_000, 'the other issue’s event');
    // (The update's delivery may be stored after the other issue's event arrived: wait for it.)
    const isUpdate = (delivery: LoggedDelivery) => delivery.issue_id === stuck.id && delivery.event === 'issue.updated';
    const logWhileWaiting = await eventually(
      () => logOf(webhook.id),
      (rows) => rows.some(isUpdate),
      15_000,
      'the update to be logged',
    );
    if (ofIssue(stuck.id).every((request) => payloadOf(request).event === 'issue.created')) {
      expect(logWhileWaiting.find(isUpdate)).toMatchObject({ status: 'pending', attempt_count: 0, out_of_order: false });
    }

    // After its bound the update goes ahead of the creation, which is still being retried.
    await env.receiver.waitFor(() => ofIssue(stuck.id).some((request) => payloadOf(request).event === 'issue.updated'), ORDER_WAIT_MS + 20_000, 'the update to go ahead');
    const log = await eventually(
      () => logOf(webhook.id),
      (rows) => rows.some((delivery) => delivery.issue_id === stuck.id && delivery.event === 'issue.updated' && delivery.status === 'succeeded'),
      20_000,
      'the update to be recorded',
    );
    const updated = log.find((delivery) => delivery.issue_id === stuck.id && delivery.event === 'issue.updated')!;
    const created = log.find((delivery) => delivery.issue_id === stuck.id && delivery.event === 'issue.created')!;
    expect(updated).toMatchObject({ status: 'succeeded', attempt_count: 1, out_of_order: true });
    expect(created).toMatchObject({ status: 'pending', out_of_order: false });
    expect(created.attempt_count).toBeGreaterThanOrEqual(2);
    expect(log.find((delivery) => delivery.issue_id === other.id)).toMatchObject({ status: 'succeeded', out_of_order: false });
  });
});

describe('rate limit', () => {
  it("paces a limited endpoint's deliveries, which wait unclaimed in the log, while an unlimited one of the same team gets all of them at once", async () => {
    const limited = await createWebhook('/limited', { events: ['issue.created'], rate_limit_per_second: 1 });
    const unlimited = await createWebhook('/unlimited', { events: ['issue.created'] });
    const issues = [];
    for (let index = 0; index < 12; index++) issues.push(await createIssue(team, { title: `Paced ${index}` }));
    const ids = new Set(issues.map((issue) => issue.id));
    const arrived = (path: string) => env.receiver.at(path).filter((request) => ids.has(issueIdOf(request)!));

    await env.receiver.waitFor(() => arrived('/unlimited').length === 12, 30_000, 'the unlimited endpoint’s twelve deliveries');
    // Meanwhile most of the limited endpoint's deliveries wait in the log: pending, never attempted.
    const waiting = (await logOf(limited.id)).filter((delivery) => ids.has(delivery.issue_id!) && delivery.status === 'pending' && delivery.attempt_count === 0);
    expect(waiting.length).toBeGreaterThanOrEqual(6);

    await env.receiver.waitFor(() => arrived('/limited').length === 12, 60_000, 'the limited endpoint’s twelve deliveries');
    const times = arrived('/limited').map((request) => request.receivedAt);
    // One a second after the first (a full bucket holds one): eleven more take at least ten seconds.
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(10_000);
    const log = await eventually(
      () => logOf(limited.id),
      (rows) => rows.filter((delivery) => ids.has(delivery.issue_id!) && delivery.status === 'succeeded').length === 12,
      20_000,
      'the limited endpoint’s log',
    );
    // Each sent once: the limit delays deliveries, it never fails them.
    expect(log.filter((delivery) => ids.has(delivery.issue_id!)).every((delivery) => delivery.attempt_count === 1)).toBe(true);
    expect((await logOf(unlimited.id)).filter((delivery) => ids.has(delivery.issue_id!))).toHaveLength(12);
  });
});
