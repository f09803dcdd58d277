// The per-endpoint rate limit as the receiver sees it, through the whole system: issues created
// through the gateway, deliveries received by a real HTTPS receiver, and the receiver's own arrival
// times checked against the documented bucket (docs/webhook-delivery-controls.md#rate-limit-per-endpoint):
// one second's worth at once, then the limit's pace, so at most limit × (1 + t) in any t seconds.
// Waits are on conditions only.
import type { ReceivedRequest } from './support/receiver';
import { createIssue, eventually, payloadOf, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

jest.setTimeout(180_000);

let env: DeliverySystem;
let team: TestTeam;

beforeAll(async () => {
  // A failed attempt is retried a second later (or after the receiver's Retry-After), then a minute
  // later. The circuit breakers stay closed (they would let one probe through and hold the rest,
  // which paces by itself): only the rate limit paces here.
  env = await startDeliverySystem({ retrySchedule: '0,1,60', delivery: { DELIVERY_BREAKER_FAILURES: 1_000 } });
  team = await env.newTeam('Rate limits');
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

/** The most of `times` (ms) within any window [t, t + windowMs). */
function busiest(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/** What the documented bucket lets through in `windowMs`: a second's worth, plus the limit's pace. */
const bound = (perSecond: number, windowMs: number) => Math.floor(perSecond * (1 + windowMs / 1000));

/**
 * Every window of one, two and five seconds holds at most what the bucket allows. (The limit is
 * kept when Worklane starts each request; windows of whole seconds at a limit of 1 a second leave
 * room for up to a second of difference between one request's way to the receiver and the next's,
 * which a loaded test machine needs.)
 */
function expectWithinLimit(times: number[], perSecond: number): void {
  const windows = [1_000, 2_000, 5_000].map((windowMs) => ({ windowMs, busiest: busiest(times, windowMs), bound: bound(perSecond, windowMs) }));
  expect(windows.filter((window) => window.busiest > window.bound)).toEqual([]);
}

async function createWebhook(path: string, settings: Record<string, unknown> = {}): Promise<{ id: number }> {
  const response = await team.client.post(`/teams/${team.team_id}/webhooks`, { url: env.receiver.url(path), events: ['issue.created'], ...settings });
  if (response.status !== 201) throw new Error(`creating a webhook failed: ${response.status} ${response.text}`);
  return response.body;
}

interface LoggedDelivery {
  status: string;
  attempt_count: number;
  issue_id: number | null;
}

async function logOf(webhookId: number): Promise<LoggedDelivery[]> {
  const response = await team.client.get(`/teams/${team.team_id}/webhooks/${webhookId}/deliveries?limit=200`);
  expect(response.status).toBe(200);
  return response.body.data;
}

/** Creates `count` issues back to back, faster than the limits below. */
async function createIssues(prefix: string, count: number): Promise<Set<number>> {
  const ids = new Set<number>();
  for (let index = 0; index < count; index++) ids.add((await createIssue(team, { title: `${prefix} ${index}` })).id);
  return ids;
}

const issueIdOf = (request: ReceivedRequest) => payloadOf(request).issue?.id as number | undefined;
const eventIdOf = (request: ReceivedRequest) => payloadOf(request).id as string;

describe('per-endpoint rate limit, at the receiver', () => {
  it('a backlog reaches the receiver within the bucket: a second’s worth at once, then the limit’s pace', async () => {
    const perSecond = 1;
    const webhook = await createWebhook('/backlog', { rate_limit_per_second: perSecond });
    const ids = await createIssues('Backlog', 10);
    const arrived = () => env.receiver.at('/backlog').filter((request) => ids.has(issueIdOf(request)!));
    await env.receiver.waitFor(() => arrived().length >= 10, 60_000, 'the ten deliveries');

    expectWithinLimit(
      arrived().map((request) => request.receivedAt),
      perSecond,
    );
    // Paced, never failed or sent twice by it.
    const log = await eventually(
      () => logOf(webhook.id),
      (rows) => rows.filter((delivery) => ids.has(delivery.issue_id!) && delivery.status === 'succeeded').length === 10,
      20_000,
      'the ten deliveries to be recorded',
    );
    expect(log.filter((delivery) => ids.has(delivery.issue_id!)).every((delivery) => delivery.attempt_count === 1)).toBe(true);
    expect(arrived()).toHaveLength(10);
  });

  it('a 429 from the receiver does not make Worklane exceed the limit: each retry waits for the bucket too', async () => {
    const perSecond = 1;
    // Every event is refused once ("too many requests, come back in a second"), then accepted.
    const refused = new Set<string>();
    env.receiver.on('/refusing', (request) => {
      const eventId = eventIdOf(request);
      if (refused.has(eventId)) return { status: 204 };
      refused.add(eventId);
      return { status: 429, headers: { 'retry-after': '1' } };
    });
    const webhook = await createWebhook('/refusing', { rate_limit_per_second: perSecond });
    const ids = await createIssues('Refused once', 8);
    const arrived = () => env.receiver.at('/refusing').filter((request) => ids.has(issueIdOf(request)!));
    await env.receiver.waitFor(() => arrived().length >= 16, 90_000, 'eight refusals and eight retries');

    // Refused attempts and their retries together keep to the bucket.
    expectWithinLimit(
      arrived().map((request) => request.receivedAt),
      perSecond,
    );
    const log = await eventually(
      () => logOf(webhook.id),
      (rows) => rows.filter((delivery) => ids.has(delivery.issue_id!) && delivery.status === 'succeeded').length === 8,
      20_000,
      'the eight deliveries to succeed',
    );
    expect(log.filter((delivery) => ids.has(delivery.issue_id!)).map((delivery) => delivery.attempt_count)).toEqual(Array(8).fill(2));
  });

  it('a limit set while deliveries wait for their retry applies to those retries as soon as the edit has returned', async () => {
    // The first attempt of each event is answered only once the limit is set, with a 500.
    let limitSet!: () => void;
    const limitIsSet = new Promise<void>((resolve) => (limitSet = resolve));
    const failedOnce = new Set<string>();
    env.receiver.on('/limited-later', (request) => {
      const eventId = eventIdOf(request);
      if (failedOnce.has(eventId)) return { status: 204 };
      failedOnce.add(eventId);
      return { status: 500, body: 'not now', until: limitIsSet };
    });
    const webhook = await createWebhook('/limited-later');
    const ids = await createIssues('Limited later', 8);
    const arrived = () => env.receiver.at('/limited-later').filter((request) => ids.has(issueIdOf(request)!));
    // All eight first attempts are at the receiver, unanswered: nothing of this webhook is due.
    await env.receiver.waitFor(() => arrived().length >= 8, 30_000, 'the eight first attempts');

    const patched = await team.client.patch(`/teams/${team.team_id}/webhooks/${webhook.id}`, { rate_limit_per_second: 1 });
    expect(patched.status).toBe(200);
    expect(patched.body.rate_limit_per_second).toBe(1);
    const limitedFrom = Date.now();
    limitSet();

    // No event reaches this webhook after the edit, so only the attempts' own look-up of the webhook
    // can tell the delivery service of the limit: the eight retries still keep to it.
    await env.receiver.waitFor(() => arrived().length >= 16, 60_000, 'the eight retries');
    const retries = arrived().filter((request) => request.receivedAt >= limitedFrom);
    expect(retries).toHaveLength(8);
    expectWithinLimit(
      retries.map((request) => request.receivedAt),
      1,
    );
    await eventually(
      () => logOf(webhook.id),
      (rows) => rows.filter((delivery) => ids.has(delivery.issue_id!) && delivery.status === 'succeeded' && delivery.attempt_count === 2).length === 8,
      20_000,
      'the eight deliveries to succeed on their retry',
    );
  });
});
