#!/usr/bin/env node
// `npm run bench:chaos`: do misbehaving endpoints slow down the healthy ones, and is anything lost?
// Starts PostgreSQL and NATS (tools/dev), every service but the console (the chart's heap limits),
// 20 teams with 5 webhooks each (100), and the receivers:
//   - 10% failing: answer 500 at once (own ports, chaos-endpoints.mjs, in a worker thread);
//   - 10% slow: answer 204 only after BENCH_SLOW_DELAY_MS;
//   - 10% rate-limited: the webhook's rate_limit_per_second is set below its team's event rate, and
//     its receiver answers 429 beyond that rate too (so the sender's pacing shows: no 429 is needed);
//   - the rest healthy (one HTTPS receiver in this process, answering 204 at once); in each team the
//     last healthy webhook is scoped to one of the team's two projects (filters.project_ids).
// The misbehaving webhooks are dealt to the teams in turn, so every team has healthy and
// misbehaving endpoints side by side.
//
// Load: issue events through the gateway at a steady open-loop rate (BENCH_RATE events/s over all
// teams): each unit creates an issue and retitles it BENCH_UPDATES_PER_ISSUE times, back to back,
// so one issue's events follow each other closely (their order at each endpoint is checked).
// Phases, on one schedule: a warm-up, then the baseline (every endpoint healthy), then chaos (the
// misbehaving endpoints misbehave, the rate limits are set), then a bounded grace time for the
// healthy endpoints' stragglers. Each team's scoped webhook also opts in to the operational events
// (webhook.failing, webhook.disabled). Then the recover phase, the life of a failed endpoint: the
// failing webhooks are switched off by Worklane's auto-disable (after BENCH_DISABLE_AFTER_S of
// failures, half the chaos phase by default; the benchmark switches off any it has not), their
// remaining deliveries end as failed, their receivers are fixed, the webhooks switched on again
// (which sends nothing), and `POST .../recover` re-sends the failed events of each one's window;
// its re-sends per second are timed until every failed event id has arrived.
//
// Figures: healthy endpoints' commit-to-receipt p50/p99 (the event's created_at to its arrival) in
// the baseline and under chaos; events lost (a committed event a healthy endpoint in its scope
// never received, or an event the API refused); deliveries out of their issue's commit order at
// the healthy endpoints; deliveries outside a filtered webhook's scope; the limited endpoints'
// busiest 1 and 5 seconds, from when their limit was set, against what the documented bucket
// allows (docs/webhook-delivery-controls.md), and the 429s they had to answer; the slow and failing
// endpoints' counts; the recovery's re-sends per second and whether each failed event arrived once
// with its own id. Targets (reported, not asserted): healthy p99 under chaos <= 1.5x the baseline's,
// 0 lost. Ends with one JSON line:
//   {"bench":"chaos","healthy_p99_ms":…,"baseline_p99_ms":…,"lost":…,"recover_per_s":…}
//
// The delivery service runs with WEBHOOK_RETRY_SCHEDULE=BENCH_RETRY_SCHEDULE (0,5,30),
// DELIVERY_BREAKER_MAX_COOL_DOWN_MS=BENCH_BREAKER_MAX_COOL_DOWN_MS (30000) and the auto-disable
// periods above (health checked every second) so that an outage of days fits in minutes; every
// other setting is its default.
//
//   BENCH_RATE=40 BENCH_WARMUP_S=5 BENCH_BASELINE_S=30 BENCH_CHAOS_S=60 BENCH_GRACE_S=30 npm run bench:chaos
//   BENCH_TEAMS=20 BENCH_WEBHOOKS_PER_TEAM=5 BENCH_FAILING=10 BENCH_SLOW=10 BENCH_LIMITED=10
//   BENCH_SLOW_DELAY_MS=3000 BENCH_LIMIT_PER_S=1 BENCH_UPDATES_PER_ISSUE=2 BENCH_RECOVER_WAIT_S=180
//   BENCH_DISABLE_AFTER_S=30 BENCH_FAILING_NOTICE_AFTER_S=15
//   A quick check that it works: BENCH_WARMUP_S=2 BENCH_BASELINE_S=5 BENCH_CHAOS_S=10 BENCH_RATE=20
import fs from 'node:fs';
import { createRequire } from 'node:module';

import { useProjectNode } from '../../dev/src/provision/index.mjs';
import { startStack } from '../../dev/src/stack.mjs';
import { say, sleep, turboBuild } from '../../dev/src/util.mjs';
import { BENCH_BUILD_FILTERS } from './build.mjs';
import { busiestWindow, limitBound, missingFrom, orderViolations, planWebhooks, spread } from './chaos-figures.mjs';
import { keepAliveAgent, nextLink, send, tally } from './http-client.mjs';
import { describeMachine } from './machine.mjs';
import { SERVICE_NODE_OPTIONS, machineCpuSeconds, peakRssMb } from './process-stats.mjs';
import { makeCertificate, startReceiver } from './receiver.mjs';
import { setting } from './settings.mjs';
import { inTurn, openLoop, preciseTimeMs } from './stats.mjs';
import { nextMessage, startWorker } from './threads.mjs';

await useProjectNode();

const require = createRequire(import.meta.url);

const RATE = setting('BENCH_RATE', 40);
const WARMUP_S = setting('BENCH_WARMUP_S', 5);
const BASELINE_S = setting('BENCH_BASELINE_S', 30);
const CHAOS_S = setting('BENCH_CHAOS_S', 60);
const GRACE_S = setting('BENCH_GRACE_S', 30);
const TEAMS = Math.max(1, setting('BENCH_TEAMS', 20));
const PER_TEAM = Math.max(1, setting('BENCH_WEBHOOKS_PER_TEAM', 5));
const FAILING = setting('BENCH_FAILING', 10);
const SLOW = setting('BENCH_SLOW', 10);
const LIMITED = setting('BENCH_LIMITED', 10);
const SLOW_DELAY_MS = setting('BENCH_SLOW_DELAY_MS', 3_000);
const LIMIT_PER_S = Math.max(1, Math.round(setting('BENCH_LIMIT_PER_S', 1)));
const UPDATES = Math.round(setting('BENCH_UPDATES_PER_ISSUE', 2));
const RECOVER_WAIT_S = setting('BENCH_RECOVER_WAIT_S', 180);
const RETRY_SCHEDULE = process.env.BENCH_RETRY_SCHEDULE || '0,5,30';
const BREAKER_MAX_COOL_DOWN_MS = setting('BENCH_BREAKER_MAX_COOL_DOWN_MS', 30_000);
const DISABLE_AFTER_S = setting('BENCH_DISABLE_AFTER_S', CHAOS_S / 2);
const FAILING_NOTICE_AFTER_S = setting('BENCH_FAILING_NOTICE_AFTER_S', DISABLE_AFTER_S / 2);
const TARGET_P99_RATIO = 1.5;
const EVENTS = ['issue.created', 'issue.updated'];
const OPERATIONAL_EVENTS = ['webhook.failing', 'webhook.disabled'];

if (process.env.WORKLANE_SKIP_BUILD !== '1') {
  say('building the services, the CLI and the test helpers (turbo, cached)...');
  const code = await turboBuild(BENCH_BUILD_FILTERS);
  if (code !== 0) process.exit(code);
}

// Loaded after the build: these are compiled packages.
const { API_STACK, api, bootstrapTeam, startSystem } = require('@worklane/testing');
/** Every service behind the API (the service table's API_STACK), in start order. */
const SERVICES = [...API_STACK];

const plan = planWebhooks({ teams: TEAMS, perTeam: PER_TEAM, failing: FAILING, slow: SLOW, limited: LIMITED });
const stack = await startStack({ name: 'bench-chaos', fast: true, fresh: true });
process.env.DATABASE_URL = stack.databaseUrl;
const certificate = makeCertificate();

// Events by number n (the "K <n>" in the issue's title): { team, project, issue, sequence, dueAt, phase, status }.
const events = new Map();
// Healthy endpoints' first receipts: plan index -> Map n -> { receivedAt, createdAt, eventId }, and
// the order they came in (plan index -> [[issue, sequence]]).
const receipts = new Map();
const arrivalOrder = new Map();
let strayDeliveries = 0;
// Events about failing webhooks, by type: { 'webhook.disabled': Set of the webhook ids they named }.
const operational = { 'webhook.failing': new Set(), 'webhook.disabled': new Set() };
const receiver = await startReceiver(certificate, {
  onDelivery(body, receivedAt, deliveryId, path) {
    if (body.event in operational) {
      operational[body.event].add(body.webhook?.id);
      return;
    }
    const index = Number(/^\/healthy\/(\d+)$/.exec(path ?? '')?.[1]);
    const n = Number(/^K (\d+)$/.exec(body.issue?.title ?? '')?.[1]);
    const event = events.get(n);
    if (!receipts.has(index) || !event) {
      strayDeliveries += 1;
      return;
    }
    if (receipts.get(index).has(n)) return;
    receipts.get(index).set(n, { receivedAt, createdAt: preciseTimeMs(body.created_at), eventId: body.id });
    arrivalOrder.get(index).push([event.issue, event.sequence]);
  },
});

let system;
let endpoints;
let exitCode = 0;

/** Asks the endpoints' worker something and resolves with its first answer that satisfies `match`. */
const ask = (message, match) => {
  const answer = nextMessage(endpoints.worker, match);
  endpoints.worker.postMessage(message);
  return answer;
};

/** Retries a setup call the rate limiter refused (429), after its Retry-After. */
async function unlimited(call) {
  for (let attempt = 0; ; attempt++) {
    const response = await call();
    if (response.status !== 429 || attempt >= 30) return response;
    await sleep(1_000 * Math.max(0.1, Number(response.headers['retry-after'] ?? 1)));
  }
}

function expectStatus(response, statuses, what) {
  if (!statuses.includes(response.status)) throw new Error(`${what}: ${response.status} ${response.text.slice(0, 300)}`);
  return response.body;
}

const iso = (ms) => new Date(ms).toISOString();

try {
  say('starting the token, project, webhook, issue, delivery and gateway services...');
  system = await startSystem({
    services: SERVICES,
    env: { NATS_URL: stack.natsUrl, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn', NODE_OPTIONS: SERVICE_NODE_OPTIONS },
    serviceEnv: {
      delivery: {
        NODE_EXTRA_CA_CERTS: certificate.certPath,
        WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
        DELIVERY_BREAKER_MAX_COOL_DOWN_MS: String(BREAKER_MAX_COOL_DOWN_MS),
        // Days of failures, compressed into the chaos phase.
        WEBHOOK_DISABLE_AFTER_MS: String(Math.max(1, Math.round(DISABLE_AFTER_S * 1000))),
        WEBHOOK_FAILING_NOTICE_AFTER_MS: String(Math.max(1, Math.round(FAILING_NOTICE_AFTER_S * 1000))),
        WEBHOOK_HEALTH_CHECK_INTERVAL_MS: '1000',
      },
    },
  });
  const pids = Object.fromEntries(SERVICES.map((name) => [name, system.services[name].pid]));
  const peakRss = Object.fromEntries(SERVICES.map((name) => [name, 0]));
  const sampleRss = () => {
    for (const name of SERVICES) {
      try {
        peakRss[name] = Math.max(peakRss[name], peakRssMb(pids[name]));
      } catch {
        // the process is gone: its last sample stands
      }
    }
  };
  const rssSampler = setInterval(sampleRss, 1_000);

  // The teams, two projects each, and the misbehaving endpoints.
  say(`creating ${TEAMS} teams with two projects each...`);
  const teams = await inTurn(Array.from({ length: TEAMS }), 4, async (_, t) => {
    const team = await bootstrapTeam(system, { teamName: `Chaos team ${t + 1}` });
    const client = api(system, team.token);
    const projectsPath = `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;
    const projects = [];
    for (const name of ['Scoped', 'Other']) projects.push(expectStatus(await unlimited(() => client.post(projectsPath, { name })), [201], `team ${t + 1} project`).id);
    return { ...team, client, projects, issuesUrl: (projectId) => `${system.gatewayUrl}/api/v1${projectsPath}/${projectId}/issues` };
  });
  endpoints = await startWorker('./chaos-endpoints.mjs', {
    cert: certificate.cert,
    key: certificate.key,
    failing: FAILING,
    slow: SLOW,
    limited: LIMITED,
    slowDelayMs: SLOW_DELAY_MS,
    limitPerSecond: LIMIT_PER_S,
  });

  // The webhooks, in plan order.
  say(`creating ${plan.length} webhooks (${FAILING} failing, ${SLOW} slow, ${LIMITED} rate-limited, ${plan.filter((w) => w.filtered).length} scoped to a project)...`);
  const used = { failing: 0, slow: 0, limited: 0 };
  let filtersSupported = true;
  const webhooks = await inTurn(plan, 4, async (entry, index) => {
    const team = teams[entry.team];
    const endpointIndex = entry.kind === 'healthy' ? null : used[entry.kind]++;
    const url = entry.kind === 'healthy' ? receiver.ipUrl(`/healthy/${index}`) : endpoints.ready.urls[entry.kind][endpointIndex];
    const body = { url, events: EVENTS, secret: `chaos-signing-secret-${index}`, description: `chaos benchmark: ${entry.kind}${entry.filtered ? ', one project' : ''}` };
    // The scoped webhook of each team also takes the events about the team's failing webhooks.
    if (entry.filtered) Object.assign(body, { filters: { project_ids: [team.projects[0]] }, operational_events: OPERATIONAL_EVENTS });
    const created = expectStatus(await unlimited(() => team.client.post(`/teams/${team.team_id}/webhooks`, body)), [201], `webhook ${index}`);
    if (entry.filtered && !(created.filters?.project_ids ?? []).includes(team.projects[0])) filtersSupported = false;
    if (entry.kind === 'healthy') {
      receipts.set(index, new Map());
      arrivalOrder.set(index, []);
    }
    return { ...entry, index, endpointIndex, id: created.id, team: entry.team, url };
  });
  if (!filtersSupported) say('note: the webhook API kept no filters: the scoped webhooks receive every project, and are checked as such');
  const scopeOf = (webhook) => (filtersSupported && webhook.filtered ? teams[webhook.team].projects[0] : null);

  // The load: units of one create and UPDATES retitles of the same issue, back to back.
  const agents = teams.map(() => keepAliveAgent(64));
  let nextNumber = 0;
  let nextIssue = 0;
  let phase = 'setup';
  let chaosAt = Infinity;
  const statuses = { warmup: {}, baseline: {}, chaos: {} };
  const unit = async (u, intendedAt) => {
    const t = u % TEAMS;
    const team = teams[t];
    const project = team.projects[Math.floor(u / TEAMS) % 2];
    const eventPhase = phase === 'warmup' ? 'warmup' : intendedAt >= chaosAt ? 'chaos' : 'baseline';
    const issue = nextIssue++;
    const headers = { authorization: `Bearer ${team.token}`, 'content-type': 'application/json' };
    let issueId;
    for (let sequence = 0; sequence <= UPDATES; sequence++) {
      const n = nextNumber++;
      const event = { team: t, project, issue, sequence, dueAt: intendedAt, phase: eventPhase, status: null };
      events.set(n, event);
      const response =
        sequence === 0
          ? await send(team.issuesUrl(project), { method: 'POST', agent: agents[t], headers, body: JSON.stringify({ title: `K ${n}`, priority: 'medium' }), keepBody: true })
          : await send(`${team.issuesUrl(project)}/${issueId}`, { method: 'PATCH', agent: agents[t], headers, body: JSON.stringify({ title: `K ${n}` }) });
      event.status = response.status || response.error;
      tally(statuses[eventPhase], event.status);
      if (sequence === 0 && response.status === 201) issueId = JSON.parse(response.text).id;
      if (!(response.status === 200 || response.status === 201)) break; // the issue's later events would not follow it
    }
  };
  const unitsPerSecond = RATE / (1 + UPDATES);
  const committed = (event) => event.status === 200 || event.status === 201;
  /** What a healthy webhook should have received: its team's committed events in its scope. */
  const expectedFor = (webhook, inPhase = () => true) => {
    const scope = scopeOf(webhook);
    return [...events].filter(([, event]) => event.team === webhook.team && committed(event) && (scope === null || event.project === scope) && inPhase(event)).map(([n]) => n);
  };
  const healthy = webhooks.filter((webhook) => webhook.kind === 'healthy');
  const healthyComplete = () => healthy.every((webhook) => missingFrom(expectedFor(webhook), receipts.get(webhook.index)).length === 0);
  const settle = async (what, done, timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) await sleep(100);
    if (!done()) say(`note: ${what} not settled after ${(timeoutMs / 1000).toFixed(0)} s`);
    return done();
  };

  if (WARMUP_S > 0) {
    say(`warm-up: ${RATE} events/s for ${WARMUP_S} s, every endpoint healthy...`);
    phase = 'warmup';
    await openLoop(unitsPerSecond, WARMUP_S, unit);
    await settle('the warm-up deliveries', healthyComplete, 60_000);
  }

  // Baseline and chaos: one steady schedule; the misbehaviour starts BASELINE_S into it.
  say(`baseline: ${RATE} events/s for ${BASELINE_S} s with every endpoint healthy; then ${CHAOS_S} s of chaos`);
  phase = 'run';
  const cpu = { start: machineCpuSeconds() };
  let rateLimitsSupported = true;
  /** When every limited webhook's rate_limit_per_second edit had returned. */
  let limitsAt = Infinity;
  const limited = webhooks.filter((webhook) => webhook.kind === 'limited');
  const chaosStarted = sleep(BASELINE_S * 1000).then(async () => {
    chaosAt = Date.now();
    cpu.chaos = machineCpuSeconds();
    say(`chaos: ${FAILING} endpoints fail, ${SLOW} answer after ${SLOW_DELAY_MS} ms, ${LIMITED} are limited to ${LIMIT_PER_S}/s`);
    await ask({ behave: { failing: 'chaos', slow: 'chaos' } }, (answer) => answer.behaving);
    // The limits first, then the receivers that enforce them: the promise starts once the edit has
    // returned, and the limited endpoints' figures count from then (before, the webhooks had none).
    await Promise.all(
      limited.map(async (webhook) => {
        const team = teams[webhook.team];
        const changed = expectStatus(
          await unlimited(() => team.client.patch(`/teams/${team.team_id}/webhooks/${webhook.id}`, { rate_limit_per_second: LIMIT_PER_S })),
          [200],
          `rate limit of webhook ${webhook.index}`,
        );
        if (changed.rate_limit_per_second !== LIMIT_PER_S) rateLimitsSupported = false;
      }),
    );
    if (!rateLimitsSupported) say('note: the webhook API kept no rate limit: the limited endpoints answer 429 beyond their rate, and nothing else paces them');
    limitsAt = Date.now();
    await ask({ behave: { limited: 'chaos' } }, (answer) => answer.behaving);
  });
  await openLoop(unitsPerSecond, BASELINE_S + CHAOS_S, unit);
  await chaosStarted;
  cpu.end = machineCpuSeconds();
  const loadDoneAt = Date.now();
  say(`the load is over; waiting up to ${GRACE_S} s for the healthy endpoints' stragglers...`);
  await settle("the healthy endpoints' deliveries", healthyComplete, GRACE_S * 1000);
  const graceUsedS = (Date.now() - loadDoneAt) / 1000;
  // What the healthy endpoints lack now is lost, whatever arrives later (during the recover phase).
  const measured = (event) => event.phase !== 'warmup';
  const missingAtGrace = healthy.flatMap((webhook) => missingFrom(expectedFor(webhook, measured), receipts.get(webhook.index)));
  const afterRun = (await ask('stats', (answer) => answer.stats)).stats;

  /** Every delivery of a webhook's log that matches `query` (the log's filters), page by page. */
  const deliveriesOf = async (webhook, query) => {
    const team = teams[webhook.team];
    const params = new URLSearchParams({ limit: '200', ...query });
    let url = `${system.gatewayUrl}/api/v1/teams/${team.team_id}/webhooks/${webhook.id}/deliveries?${params}`;
    const found = [];
    for (let page = 0; url && page < 1_000; page++) {
      const response = await unlimited(() => team.client.get(url));
      expectStatus(response, [200], `deliveries of webhook ${webhook.index}`);
      found.push(...response.body.data);
      url = nextLink(response.headers.link, url);
    }
    return found;
  };

  /**
   * The life of a failed endpoint after the run: switched off by Worklane after failing for
   * BENCH_DISABLE_AFTER_S (or by the benchmark, if not yet), its waiting deliveries end as failed,
   * its receiver is fixed, it is switched on again (which sends nothing), and a recovery re-sends the
   * failed events of the chaos window. Resolves to { perSecond, lines() }.
   */
  const recoverPhase = async (failing) => {
    const unavailable = (why) => ({ perSecond: NaN, lines: () => [`recover: not measured: ${why}`] });
    if (failing.length === 0) return unavailable('no failing endpoints');
    const teamOf = (webhook) => teams[webhook.team];
    const webhookUrl = (webhook) => `/teams/${teamOf(webhook).team_id}/webhooks/${webhook.id}`;
    const patch = (webhook, body) => unlimited(() => teamOf(webhook).client.patch(webhookUrl(webhook), body));

    // Switched off: by Worklane's auto-disable (given until BENCH_DISABLE_AFTER_S + 15 s after the
    // chaos began), or else by the benchmark.
    const read = (webhook) => unlimited(() => teamOf(webhook).client.get(webhookUrl(webhook))).then((response) => expectStatus(response, [200], `webhook ${webhook.index}`));
    const autoDeadline = chaosAt + (DISABLE_AFTER_S + 15) * 1000;
    while (Date.now() < autoDeadline && !(await Promise.all(failing.map(read))).every((current) => current.disabled_reason)) await sleep(1_000);
    const states = await Promise.all(
      failing.map(async (webhook) => {
        const current = await read(webhook);
        if (!current.active && current.disabled_reason) return { webhook, auto: true, offAt: Date.parse(current.disabled_at), reason: current.disabled_reason };
        expectStatus(await patch(webhook, { active: false }), [200], `switching webhook ${webhook.index} off`);
        return { webhook, auto: false, offAt: Date.now() };
      }),
    );
    const autoDisabled = states.filter((state) => state.auto);
    say(`recover: ${autoDisabled.length} of ${failing.length} failing webhooks were switched off by Worklane; waiting until their waiting deliveries have failed...`);
    // Every delivery of a switched-off webhook ends failed once it comes due (the breaker's
    // cool-down and the retry schedule bound when).
    const settleStarted = Date.now();
    const settleDeadline = settleStarted + RECOVER_WAIT_S * 1000;
    let waiting = Infinity;
    while (Date.now() < settleDeadline) {
      waiting = (await Promise.all(failing.map((webhook) => deliveriesOf(webhook, { status: 'pending' })))).reduce((sum, list) => sum + list.length, 0);
      if (waiting === 0) break;
      await sleep(1_000);
    }
    const settleSeconds = (Date.now() - settleStarted) / 1000;
    if (waiting > 0) say(`note: ${waiting} deliveries of the switched-off webhooks still waiting after ${RECOVER_WAIT_S} s`);

    // The failed events of each webhook's window, by event id: what the recovery must send again.
    const since = iso(chaosAt - 1_000);
    const windows = await Promise.all(
      states.map(async (state) => {
        const until = iso(state.offAt + 1_000);
        const failed = await deliveriesOf(state.webhook, { status: 'failed', created_after: since, created_before: until });
        return { ...state, until, failedIds: new Set(failed.map((delivery) => delivery.event_id)) };
      }),
    );
    const before = (await ask('stats', (answer) => answer.stats)).stats;
    const acceptedBefore = new Map(before.filter((endpoint) => endpoint.kind === 'failing').map((endpoint) => [endpoint.index, endpoint.accepted.length]));
    await ask({ behave: { failing: 'healthy' } }, (answer) => answer.behaving);
    for (const webhook of failing) expectStatus(await patch(webhook, { active: true }), [200], `switching webhook ${webhook.index} on`);

    say('recover: POST .../recover for each failing webhook, over its window of the chaos phase...');
    const startedAt = Date.now();
    const jobs = await Promise.all(
      windows.map(async (window) => ({
        window,
        response: await unlimited(() => teamOf(window.webhook).client.post(`${webhookUrl(window.webhook)}/recover`, { since, until: window.until })),
      })),
    );
    if (jobs.some(({ response }) => response.status === 404 || response.status === 405)) return unavailable(`the recover API answered ${jobs[0].response.status}`);
    for (const { window, response } of jobs) expectStatus(response, [200, 201, 202], `recover of webhook ${window.webhook.index}`);
    const finished = new Set(['succeeded', 'failed']);
    const results = await Promise.all(
      jobs.map(async ({ window, response }) => {
        let job = response.body;
        const deadline = Date.now() + RECOVER_WAIT_S * 1000;
        while (!finished.has(job.status) && Date.now() < deadline) {
          await sleep(250);
          job = expectStatus(await unlimited(() => teamOf(window.webhook).client.get(`${webhookUrl(window.webhook)}/recoveries/${job.id}`)), [200], 'recovery progress');
        }
        return { window, job };
      }),
    );
    // Every failed event has arrived once each endpoint holds each of its failed event ids.
    const receivedAfter = (stats, window) => {
      const endpoint = stats.find((candidate) => candidate.kind === 'failing' && candidate.index === window.webhook.endpointIndex);
      return (endpoint?.accepted ?? []).slice(acceptedBefore.get(window.webhook.endpointIndex) ?? 0);
    };
    let stats = before;
    const missingNow = () => windows.reduce((sum, window) => sum + missingFrom(window.failedIds, new Set(receivedAfter(stats, window).map(([, eventId]) => eventId))).length, 0);
    const arriveDeadline = Date.now() + RECOVER_WAIT_S * 1000;
    while (Date.now() < arriveDeadline) {
      stats = (await ask('stats', (answer) => answer.stats)).stats;
      if (missingNow() === 0) break;
      await sleep(250);
    }
    const arrivedAt = Date.now();
    const missingAfter = missingNow();
    let duplicates = 0;
    let unexpected = 0;
    for (const window of windows) {
      const seen = new Set();
      for (const [, eventId] of receivedAfter(stats, window)) {
        if (seen.has(eventId)) duplicates += 1;
        else if (!window.failedIds.has(eventId)) unexpected += 1;
        seen.add(eventId);
      }
    }
    const failedEvents = windows.reduce((sum, window) => sum + window.failedIds.size, 0);
    const sum = (key) => results.reduce((total, { job }) => total + (job[key] ?? 0), 0);
    const jobStatuses = {};
    for (const { job } of results) tally(jobStatuses, job.status);
    const seconds = (arrivedAt - startedAt) / 1000;
    const perSecond = sum('queued') / seconds;
    const statusText = Object.entries(jobStatuses)
      .map(([status, count]) => `${status} x${count}`)
      .join(', ');
    const fmt = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
    const met = (ok) => (ok ? 'met' : 'MISSED');
    return {
      perSecond,
      lines: () => [
        `recover (${FAILING} failing endpoints: ${autoDisabled.length} switched off by Worklane after ${DISABLE_AFTER_S} s of failures${autoDisabled[0] ? ` ("${autoDisabled[0].reason}")` : ''}, ${failing.length - autoDisabled.length} by the benchmark; their waiting deliveries failed within ${fmt(settleSeconds)} s${waiting > 0 ? `, ${waiting} still waiting` : ''}; fixed, switched on, recovered):`,
        `  ${failedEvents} failed events in the windows; jobs ${statusText}: ${sum('found')} found, ${sum('queued')} sent again, ${sum('skipped')} skipped, ${sum('delivered')} delivered, ${sum('failed')} failed again; pace ${results[0]?.job.pace_per_second ?? 'n/a'}/s per webhook (${results.length} jobs at once)`,
        `  ${sum('queued')} re-sends in ${fmt(seconds, 2)} s, from the first POST to the last arrival: ${fmt(perSecond)}/s`,
        `  failed events that never arrived after it: ${missingAfter} (target 0: ${met(missingAfter === 0)}); received more than once: ${duplicates}; received and not among the failed: ${unexpected}`,
      ],
    };
  };

  // The recover phase.
  const failingWebhooks = webhooks.filter((webhook) => webhook.kind === 'failing');
  const recover = await recoverPhase(failingWebhooks);

  clearInterval(rssSampler);
  sampleRss();
  const deaths = SERVICES.filter((name) => system.services[name].process.exitCode !== null || system.services[name].process.signalCode !== null);

  // Figures.
  const latencies = (inPhase) =>
    spread(
      healthy.flatMap((webhook) => [...receipts.get(webhook.index)].filter(([n]) => events.get(n).phase === inPhase).map(([, receipt]) => receipt.receivedAt - receipt.createdAt)),
    );
  const baseline = latencies('baseline');
  const chaos = latencies('chaos');
  const missing = missingAtGrace.length;
  const missingByPhase = { baseline: 0, chaos: 0 };
  for (const n of missingAtGrace) missingByPhase[events.get(n).phase] += 1;
  const refused = [...events.values()].filter((event) => measured(event) && !committed(event)).length;
  const lost = missing + refused;
  const outOfOrder = healthy.reduce((sum, webhook) => sum + orderViolations(arrivalOrder.get(webhook.index)), 0);
  const filtered = healthy.filter((webhook) => scopeOf(webhook) !== null);
  const outOfScope = filtered.reduce((sum, webhook) => sum + [...receipts.get(webhook.index).keys()].filter((n) => events.get(n).project !== scopeOf(webhook)).length, 0);
  const byKind = (stats, kind) => stats.filter((endpoint) => endpoint.kind === kind);
  const sumAnswers = (list) => {
    const counts = {};
    for (const endpoint of list) for (const [status, count] of Object.entries(endpoint.answered)) counts[status] = (counts[status] ?? 0) + count;
    return counts;
  };
  const limitedStats = byKind(afterRun, 'limited');
  // From when the limits were in force: each endpoint's busiest 1 and 5 s against the documented
  // bucket (a second's worth at once, then the limit's pace: limitBound in chaos-figures.mjs).
  const limitedArrivals = limitedStats.map((endpoint) => endpoint.arrivals.filter((at) => at >= limitsAt));
  const busiest = Math.max(0, ...limitedArrivals.map((arrivals) => busiestWindow(arrivals)));
  const busiest5 = Math.max(0, ...limitedArrivals.map((arrivals) => busiestWindow(arrivals, 5_000)));
  const [secondBound, paceBound] = [limitBound(LIMIT_PER_S, 1_000), limitBound(LIMIT_PER_S, 5_000)];
  const limitedReceived = limitedStats.reduce((sum, endpoint) => sum + endpoint.accepted.filter(([, , at]) => at >= limitsAt).length, 0);
  const limitedSeconds = (loadDoneAt - limitsAt) / 1000;
  const slowStats = byKind(afterRun, 'slow');
  const failingStats = byKind(afterRun, 'failing');
  const chaosSeconds = (loadDoneAt - chaosAt) / 1000;

  const f = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
  const pass = (ok) => (ok ? 'met' : 'MISSED');
  const statusList = (counts) =>
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, count]) => `${status} x${count}`)
      .join(', ') || 'none';
  const ratio = chaos.p99 / baseline.p99;
  const lines = [
    '',
    `Chaos benchmark: ${TEAMS} teams, ${webhooks.length} webhooks (${healthy.length} healthy of which ${filtered.length} scoped to a project, ${FAILING} failing, ${SLOW} slow, ${LIMITED} rate-limited), ${RATE} events/s`,
    `machine: ${await describeMachine(stack)}`,
    '',
    'healthy endpoints, event commit to receipt:',
    `  baseline, every endpoint healthy (${BASELINE_S} s, ${baseline.count} deliveries): p50 ${f(baseline.p50)} ms  p99 ${f(baseline.p99)} ms  max ${f(baseline.max)} ms`,
    `  under chaos (${CHAOS_S} s, ${chaos.count} deliveries):                p50 ${f(chaos.p50)} ms  p99 ${f(chaos.p99)} ms  max ${f(chaos.max)} ms`,
    `  p99 under chaos / baseline: ${f(ratio, 2)} (target <= ${TARGET_P99_RATIO}: ${pass(ratio <= TARGET_P99_RATIO)})`,
    `  lost: ${lost} (target 0: ${pass(lost === 0)}): ${missing} deliveries to healthy endpoints never received within ${GRACE_S} s of the load's end (baseline ${missingByPhase.baseline}, chaos ${missingByPhase.chaos}), ${refused} events refused by the API; stragglers took ${f(graceUsedS)} s`,
    `  API answers: baseline ${statusList(statuses.baseline)}; chaos ${statusList(statuses.chaos)}`,
    `  out of their issue's commit order: ${outOfOrder} (target 0: ${pass(outOfOrder === 0)})`,
    filtersSupported
      ? `  scoped webhooks: ${outOfScope} deliveries of another project's events (target 0: ${pass(outOfScope === 0)})`
      : '  scoped webhooks: not checked, the API keeps no filters yet',
    '',
    'misbehaving endpoints during chaos:',
    `  rate-limited (${LIMIT_PER_S}/s each, ${rateLimitsSupported ? 'rate_limit_per_second set' : 'receiver 429s only: the API keeps no rate limit yet'}): busiest 5 s ${busiest5} requests (target <= ${paceBound}: ${pass(busiest5 <= paceBound)}), busiest second ${busiest} (target <= ${secondBound}: ${pass(busiest <= secondBound)}), ${limitedReceived} accepted (${f(limitedReceived / Math.max(1, limitedStats.length) / limitedSeconds, 2)}/s each), answers ${statusList(sumAnswers(limitedStats))}`,
    `  slow (${SLOW_DELAY_MS} ms): ${slowStats.reduce((sum, endpoint) => sum + endpoint.accepted.length, 0)} accepted in all, answers ${statusList(sumAnswers(slowStats))}`,
    `  failing: answers ${statusList(sumAnswers(failingStats))}`,
    '',
    ...recover.lines(),
    `  operational events received by the opted-in endpoints: webhook.failing about ${operational['webhook.failing'].size} webhooks, webhook.disabled about ${operational['webhook.disabled'].size}`,
    '',
    `machine CPU: ${f((cpu.chaos.busy - cpu.start.busy) / BASELINE_S, 2)} cores busy in the baseline, ${f((cpu.end.busy - cpu.chaos.busy) / chaosSeconds, 2)} under chaos (everything on the machine)`,
    `peak RSS (VmHWM): ${SERVICES.map((name) => `${name} ${f(peakRss[name])} MB`).join(', ')}`,
    `receiver: ${receiver.requests} requests at the healthy endpoints, ${strayDeliveries} not from this run's events`,
    ...(deaths.length ? [`SERVICES THAT EXITED DURING THE RUN: ${deaths.join(', ')}`] : []),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const round = (value) => (Number.isFinite(value) ? Math.round(value * 10) / 10 : null);
  process.stdout.write(
    `${JSON.stringify({ bench: 'chaos', healthy_p99_ms: round(chaos.p99), baseline_p99_ms: round(baseline.p99), lost, recover_per_s: round(recover.perSecond) })}\n`,
  );
} catch (error) {
  say(`benchmark failed: ${error?.stack ?? error}`);
  exitCode = 1;
} finally {
  if (endpoints) {
    endpoints.worker.postMessage('close');
    await Promise.race([new Promise((resolve) => endpoints.worker.once('message', resolve)), sleep(5_000)]);
    await endpoints.worker.terminate();
  }
  await system?.stop().catch((error) => say(`could not stop the services: ${error?.message ?? error}`));
  await receiver.close();
  fs.rmSync(certificate.dir, { recursive: true, force: true });
  await stack.stop();
}
process.exit(exitCode);
