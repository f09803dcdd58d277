// A team whose events fan out into more deliveries than its budget (DELIVERY_FANOUT_PER_TEAM_PER_SECOND)
// waits in the fan-out backlog; other teams' events go straight through meanwhile, and every
// waiting event is delivered later, to the webhooks it had when it arrived, none lost. Every wait
// is on a condition.
import { createIssue, createWebhook, eventually, payloadOf, startDeliverySystem, type DeliverySystem } from './support/system';

jest.setTimeout(90_000);

// Four deliveries at once, then one a second: a team with four webhooks gets one event per 4 s.
const PER_SECOND = 1;
const BURST = 4;

let env: DeliverySystem;

beforeAll(async () => {
  env = await startDeliverySystem({ delivery: { DELIVERY_FANOUT_PER_TEAM_PER_SECOND: PER_SECOND, DELIVERY_FANOUT_PER_TEAM_BURST: BURST } });
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

const metrics = async () => (await fetch(`${env.system.services.delivery!.metricsUrl}/metrics`)).text();
const metricValue = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?)$`, 'm').exec(text)?.[1] ?? Number.NaN);
const titlesAt = (path: string) => env.receiver.at(path).map((request) => payloadOf(request).issue.title as string);

it("queues a team's events beyond its fan-out budget, lets other teams through, and delivers every queued event later", async () => {
  const [busy, quiet] = await Promise.all([env.newTeam('Busy'), env.newTeam('Quiet')]);
  const paths = [0, 1, 2, 3].map((index) => `/busy-${index}`);
  for (const path of paths) await createWebhook(busy, { url: env.receiver.url(path), events: ['issue.created'] });
  await createWebhook(quiet, { url: env.receiver.url('/quiet'), events: ['issue.created'] });

  // Six events of four deliveries each: the first spend the burst (and what refilled meanwhile),
  // the others wait, each for four seconds of budget.
  const titles = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth'];
  for (const title of titles) await createIssue(busy, { title });
  await eventually(metrics, (text) => metricValue(text, 'worklane_delivery_fanout_queued_total') >= 4, 20_000, 'events queued');

  // A webhook created now was not there when the busy team's events arrived: it gets none of them.
  await createWebhook(busy, { url: env.receiver.url('/busy-late'), events: ['issue.created'] });

  // The quiet team is not behind the busy one: its event is delivered while the busy team's wait.
  await createIssue(quiet, { title: 'quiet one' });
  await env.receiver.waitFor(() => titlesAt('/quiet').includes('quiet one'), 20_000, "the quiet team's delivery");
  expect(metricValue(await metrics(), 'worklane_delivery_fanout_backlog_events')).toBeGreaterThan(0);

  // Every event of the busy team reaches each of its four webhooks exactly once.
  await env.receiver.waitFor(() => paths.every((path) => titlesAt(path).length === titles.length), 60_000, "the busy team's queued deliveries");
  for (const path of paths) expect([...titlesAt(path)].sort()).toEqual([...titles].sort());
  expect(titlesAt('/busy-late')).toEqual([]);
  await eventually(metrics, (text) => metricValue(text, 'worklane_delivery_fanout_backlog_events') === 0, 20_000, 'an empty backlog');
});
