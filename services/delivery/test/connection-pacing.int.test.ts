// A team's new receiver connections are paced (DELIVERY_TEAM_CONNECTIONS_PER_SECOND and _BURST):
// endpoints that need connections together get them one after another, in the team's own time,
// while another team's attempt goes at once and attempts on kept-alive connections never wait.
// Every wait is on a condition (requests at the receivers); the pace is checked by the counters
// the sender keeps and by order, not by durations.
import { Receiver } from './support/receiver';
import { createIssue, createWebhook, eventually, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

jest.setTimeout(90_000);

/** One new connection a second after the first: five endpoints take at least four seconds. */
const PER_SECOND = 1;
const ENDPOINTS = 5;

let env: DeliverySystem;
let endpoints: Receiver[] = [];

beforeAll(async () => {
  env = await startDeliverySystem({ delivery: { DELIVERY_TEAM_CONNECTIONS_PER_SECOND: PER_SECOND, DELIVERY_TEAM_CONNECTIONS_BURST: 1 } });
  // A receiver per endpoint: each is an origin of its own, so each attempt needs its own connection.
  endpoints = await Promise.all(Array.from({ length: ENDPOINTS }, () => Receiver.start(env.certificate)));
}, 120_000);
afterAll(async () => {
  await Promise.allSettled(endpoints.map((endpoint) => endpoint.stop()));
  await env?.stop();
});

const metrics = async () => (await fetch(`${env.system.services.delivery!.metricsUrl}/metrics`)).text();
/** A counter's value, whatever constant labels (the service's) it carries. */
const counter = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
const waits = async () => {
  const text = await metrics();
  return { count: counter(text, 'worklane_delivery_connection_waits_total'), seconds: counter(text, 'worklane_delivery_connection_wait_seconds_total') };
};
const received = (receiver: Receiver, issueId: number) =>
  receiver.requests.filter((request) => (JSON.parse(request.body.toString('utf8')) as { issue: { id: number } }).issue.id === issueId);

it('sends the events of one endpoint over its kept-alive connection without waiting for the pace', async () => {
  const team = await env.newTeam('Steady team');
  await createWebhook(team, { url: env.receiver.url('/steady'), events: ['issue.created'] });
  const before = await waits();
  for (let n = 0; n < 3; n++) {
    const issue = await createIssue(team, { title: `steady ${n}` });
    await env.receiver.waitFor(() => received(env.receiver, issue.id).length > 0, 20_000, `the delivery of issue ${issue.id}`);
  }
  // The first event took the team's one connection at once; the next two, one after the other,
  // found it idle. A new connection for either would have waited for the pace (one a second).
  expect(Number.isFinite(before.count)).toBe(true);
  expect(await waits()).toEqual(before);
});

it("spreads one team's new connections over time while another team's delivery goes at once", async () => {
  const busy: TestTeam = await env.newTeam('Reconnecting team');
  const other: TestTeam = await env.newTeam('Other team');
  const otherReceiver = await Receiver.start(env.certificate);
  try {
    for (const endpoint of endpoints) await createWebhook(busy, { url: endpoint.url('/paced'), events: ['issue.created'] });
    await createWebhook(other, { url: otherReceiver.url('/other'), events: ['issue.created'] });
    const before = await waits();

    const busyIssue = await createIssue(busy, { title: 'five new connections' });
    const reached = async () => endpoints.filter((endpoint) => received(endpoint, busyIssue.id).length > 0).length;
    // The first connection goes at once; the team's next four wait a second more each.
    await eventually(reached, (count) => count >= 1, 20_000, 'the first endpoint');
    const otherIssue = await createIssue(other, { title: 'its own burst' });
    await otherReceiver.waitFor(() => received(otherReceiver, otherIssue.id).length > 0, 20_000, "the other team's delivery");
    const reachedWhenOtherArrived = await reached();

    await eventually(reached, (count) => count === ENDPOINTS, 30_000, 'every endpoint');
    const after = await waits();
    // Four attempts waited (every one past the burst of one), together at least 1 + 2 + 3 + 4 s
    // less the moments between their asking, which are far below a second.
    expect(after.count - before.count).toBe(ENDPOINTS - 1);
    expect(after.seconds - before.seconds).toBeGreaterThan(5);
    // The other team's delivery did not wait behind them: the last of them needs 4 s at least.
    expect(reachedWhenOtherArrived).toBeLessThan(ENDPOINTS);
  } finally {
    await otherReceiver.stop();
  }
});
