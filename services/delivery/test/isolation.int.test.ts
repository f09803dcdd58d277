// One team's receivers cannot slow down another team's deliveries: per-team and per-endpoint
// budgets with fair claims, separate connect/TLS/header timeouts, a circuit breaker per endpoint,
// and receiver names resolved by the caching asynchronous resolver; on a busy CPU the event threads
// of the issue and delivery services go before their API threads. Every wait is on a condition
// (requests held by an endpoint, states in the delivery log), never on a duration.
import { readFileSync, readdirSync } from 'node:fs';
import { DnsResponder } from './support/dns';
import { SwitchableEndpoint } from './support/endpoint';
import { createWebhook, eventually, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

jest.setTimeout(90_000);

const CACHED_HOST = 'cached.worklane.test';
const PER_TEAM = 4;

let env: DeliverySystem;
let dns: DnsResponder;
let hanging: SwitchableEndpoint;
let silent: SwitchableEndpoint;

beforeAll(async () => {
  dns = await DnsResponder.start();
  env = await startDeliverySystem({
    // Enough attempts that probes of a broken endpoint cannot use up a delivery's schedule.
    retrySchedule: '0,1,1,1,1,1,1,1,1,1,1,1',
    env: { WEBHOOK_DNS_SERVERS: dns.server },
    certificateNames: [CACHED_HOST],
    delivery: {
      // A small replica: under the old single pool, one team's 4 endpoints x 2 would fill all 8 slots.
      DELIVERY_CONCURRENCY: 8,
      DELIVERY_CONCURRENCY_PER_TEAM: PER_TEAM,
      DELIVERY_CONCURRENCY_PER_WEBHOOK: 2,
      // A receiver that completes TLS and never answers holds its attempt for the whole test...
      WEBHOOK_TIMEOUT_MS: 60_000,
      WEBHOOK_HEADERS_TIMEOUT_MS: 60_000,
      DELIVERY_LEASE_MS: 120_000,
      // ...while one that never finishes the handshake is given up on quickly.
      WEBHOOK_TLS_TIMEOUT_MS: 500,
      DELIVERY_BREAKER_FAILURES: 3,
      DELIVERY_BREAKER_COOL_DOWN_MS: 500,
      DELIVERY_BREAKER_MAX_COOL_DOWN_MS: 1_000,
    },
  });
  [hanging, silent] = await Promise.all([SwitchableEndpoint.start(env.certificate, 'hanging'), SwitchableEndpoint.start(env.certificate, 'silent')]);
}, 120_000);
afterAll(async () => {
  // Held requests end first, so the delivery service has nothing in flight when it stops.
  await Promise.allSettled([hanging?.stop(), silent?.stop()]);
  await env?.stop();
  await dns?.stop();
});

interface Delivery {
  id: string;
  status: string;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
}

const deliveriesOf = async (team: TestTeam, webhookId: number) => {
  const response = await team.client.get(`/teams/${team.team_id}/webhooks/${webhookId}/deliveries`);
  expect(response.status).toBe(200);
  return response.body.data as Delivery[];
};
const detailOf = async (team: TestTeam, deliveryId: string) => (await team.client.get(`/teams/${team.team_id}/deliveries/${deliveryId}`)).body;
const ping = async (team: TestTeam, webhookId: number) => {
  const response = await team.client.post(`/teams/${team.team_id}/webhooks/${webhookId}/ping`);
  expect(response.status).toBe(201);
  return response.body as Delivery;
};
const metrics = async () => (await fetch(`${env.system.services.delivery!.metricsUrl}/metrics`)).text();
/** The value of `name` whose labels include `label` (e.g. `state="open"`), whatever other labels it has. */
const metricValue = (text: string, name: string, label = '') => {
  const escaped = label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = new RegExp(`^${name}(?:\\{[^}]*${escaped}[^}]*\\})? (\\d+(?:\\.\\d+)?)$`, 'm');
  return Number(pattern.exec(text)?.[1] ?? Number.NaN);
};

it("delivers another team's webhook at once while one team's endpoints hold every attempt they may", async () => {
  const [attacker, victim] = await Promise.all([env.newTeam('Attacker'), env.newTeam('Victim')]);
  const webhooks = [];
  for (let index = 0; index < 4; index += 1) {
    webhooks.push(await createWebhook(attacker, { url: hanging.url(`/stall-${index}`), events: ['issue.created'] }));
  }
  // 12 deliveries to endpoints that never answer: the attacker could use every slot of the replica.
  for (const webhook of webhooks) for (let count = 0; count < 3; count += 1) await ping(attacker, webhook.id);
  await eventually(
    async () => hanging.hanging,
    (held) => held === PER_TEAM,
    20_000,
    "the attacker's attempts to fill its budget",
  );

  const victimHook = await createWebhook(victim, { url: env.receiver.url('/victim'), events: ['issue.created'] });
  const victimPing = await ping(victim, victimHook.id);
  await env.receiver.waitFor((requests) => requests.some((request) => request.headers['x-webhook-delivery'] === victimPing.id), 20_000, "the victim's ping");

  // The victim's delivery went out while every attempt of the attacker was still hanging, and the
  // attacker never had more attempts in flight than its budget.
  expect(hanging.hanging).toBe(PER_TEAM);
  expect(hanging.requests).toHaveLength(PER_TEAM);
  const text = await metrics();
  expect(metricValue(text, 'worklane_delivery_teams_at_budget')).toBe(1);
  expect(metricValue(text, 'worklane_delivery_attempts_in_flight')).toBe(PER_TEAM);
  expect(metricValue(text, 'worklane_delivery_schedule_delay_seconds_count')).toBeGreaterThan(0);
  expect(metricValue(text, 'worklane_delivery_team_in_flight_bucket', 'le="4"')).toBeGreaterThan(0);
  const waiting = (await Promise.all(webhooks.map((webhook) => deliveriesOf(attacker, webhook.id)))).flat();
  expect(waiting.filter((delivery) => delivery.status === 'pending')).toHaveLength(12);
  expect(waiting.filter((delivery) => delivery.attempt_count === 0)).toHaveLength(12);

  // The attacker's receivers give up: its attempts end and the slots come back.
  hanging.mode = 'ok';
  hanging.dropConnections();
  await eventually(
    async () => metricValue(await metrics(), 'worklane_delivery_attempts_in_flight'),
    (value) => value === 0,
    30_000,
    'no attempt in flight',
  );
});

it('opens the circuit of an endpoint that keeps timing out, defers its deliveries truthfully, probes and closes it', async () => {
  const team = await env.newTeam('Breaker');
  const webhook = await createWebhook(team, { url: silent.url('/silent'), events: ['issue.created'] });
  const pings = [];
  for (let count = 0; count < 8; count += 1) pings.push(await ping(team, webhook.id));

  // Three handshakes time out, the breaker opens, and every delivery not attempted is moved to
  // the end of the cool-down, without an attempt being counted.
  await eventually(
    metrics,
    (text) => metricValue(text, 'worklane_webhook_circuit_breakers', 'state="open"') + metricValue(text, 'worklane_webhook_circuit_breakers', 'state="half_open"') >= 1,
    30_000,
    'a broken circuit',
  );
  const deferred = await eventually(
    () => deliveriesOf(team, webhook.id),
    (list) =>
      list
        .filter((delivery) => delivery.attempt_count === 0)
        .every((delivery) => delivery.next_attempt_at !== null && Date.parse(delivery.next_attempt_at) > Date.parse(delivery.created_at)),
    20_000,
    'the untried deliveries to be deferred',
  );
  expect(deferred.filter((delivery) => delivery.attempt_count === 0).length).toBeGreaterThan(0);
  const firstFailure = (await detailOf(team, deferred.find((delivery) => delivery.attempt_count > 0)!.id)).attempts[0];
  expect(firstFailure).toMatchObject({ status_code: null, error: 'TLS handshake failed (ERR_TLS_HANDSHAKE_TIMEOUT)', response_body: null });

  // While it stays broken, only probes reach it: every connection it got is an attempt in the log.
  const connectionsWhenOpened = silent.connections;
  await eventually(
    async () => silent.connections,
    (connections) => connections >= connectionsWhenOpened + 2,
    30_000,
    'two probes',
  );
  await eventually(
    async () => (await deliveriesOf(team, webhook.id)).reduce((sum, delivery) => sum + delivery.attempt_count, 0),
    (attempts) => attempts === silent.connections,
    20_000,
    'every connection recorded as an attempt',
  );
  expect(silent.connections).toBeLessThan(pings.length + 3);

  // The receiver recovers: a probe succeeds, the breaker closes and everything is delivered.
  silent.mode = 'ok';
  const delivered = await eventually(
    () => deliveriesOf(team, webhook.id),
    (list) => list.every((delivery) => delivery.status === 'succeeded'),
    30_000,
    'every ping delivered',
  );
  expect(delivered).toHaveLength(pings.length);
  for (const delivery of delivered) {
    const detail = await detailOf(team, delivery.id);
    expect(detail.attempts).toHaveLength(delivery.attempt_count);
    expect(detail.attempts.at(-1)).toMatchObject({ status_code: 200, error: null });
  }
  const text = await metrics();
  expect(metricValue(text, 'worklane_webhook_circuit_breakers', 'state="open"')).toBe(0);
  expect(metricValue(text, 'worklane_webhook_circuit_transitions_total', 'to="closed"')).toBeGreaterThanOrEqual(1);
  expect(metricValue(text, 'worklane_webhook_deliveries_deferred_total')).toBeGreaterThanOrEqual(1);
});

it('resolves a receiver once per TTL of its DNS records, not once per attempt', async () => {
  dns.set(CACHED_HOST, '127.0.0.1', 300);
  const team = await env.newTeam('Cached DNS');
  const webhook = await createWebhook(team, { url: env.receiver.url('/cached', CACHED_HOST), events: ['issue.created'] });
  const delivered = async (count: number) =>
    eventually(
      () => deliveriesOf(team, webhook.id),
      (list) => list.length === count && list.every((delivery) => delivery.status === 'succeeded'),
      20_000,
      `${count} deliveries`,
    );
  await ping(team, webhook.id);
  await delivered(1);
  const queriesAfterFirst = dns.queries;
  for (let count = 0; count < 3; count += 1) await ping(team, webhook.id);
  await delivered(4);
  expect(dns.queries).toBe(queriesAfterFirst);
  expect(env.receiver.at('/cached')).toHaveLength(4);
});

/** A thread's nice value (field 19 of /proc/<pid>/task/<tid>/stat), and its name. */
function threadOf(pid: number, tid: number | string): { name: string; nice: number } {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  // "<tid> (<name>) <state> ...": the name may hold spaces and parentheses; the state is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(fields[19 - 3]) };
}

it.each([
  ['issue', 'outbox relay'],
  ['delivery', 'delivery pipeli'],
])("runs the %s service's API thread below its event thread (API_THREAD_NICE, 10 by default)", (service, eventThread) => {
  const pid = env.system.services[service as 'issue' | 'delivery']!.pid!;
  // The main thread's id is the process id.
  expect(threadOf(pid, pid).nice).toBe(10);
  const others = readdirSync(`/proc/${pid}/task`).map((tid) => threadOf(pid, tid));
  expect(others.filter((thread) => thread.name === eventThread).map((thread) => thread.nice)).toEqual([0]);
});
