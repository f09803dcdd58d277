#!/usr/bin/env node
// `npm run bench:isolation`: can one team slow down another? Starts PostgreSQL and NATS (tools/dev),
// every service but the console with the chart's heap limits and the gateway's default rate limit,
// and two teams:
//   - the victim sends issue creates and updates through the gateway at a steady rate (open loop,
//     50/s) to one webhook on a healthy local HTTPS receiver;
//   - the hostile team has webhooks on endpoints that accept TCP and never answer and on endpoints
//     that answer only after 5 s, each on its own port.
// Phase 1: the victim alone. Phase 2: the same, while the hostile team fires issue events at 200/s
// (spread over several tokens, so the per-token rate limit is not all that stops it; its 429s are
// counted), sends bodies the edge must refuse (over 1 MiB, U+0000, a 400 KB invalid array,
// text/plain, an over-long field) and pages through its largest lists. Then a bounded grace time
// for the victim's stragglers.
//
// The victim's latency is measured from each event's commit (the created_at of the webhook body:
// the issue's created_at or updated_at) to its receipt, and also from the time the request was due.
// Prints it alone and under attack, the victim's events lost (never received) or received only
// after the attack, every service's peak RSS against the memory limit the chart gives it
// (charts/worklane/values.yaml), CPU per process and the services' queue gauges for each phase, and
// ends with one JSON line. The victim's deliveries are broken down by stage (outbox row, bus,
// delivery row, first attempt, receipt: delivery-stages.mjs) alone, in the attack's first window
// and after it, and per window of the timeline; and every thread's CPU and time spent waiting for a
// CPU (its run-queue time, from /proc/<pid>/task/<tid>/schedstat) in the same three parts. Targets
// (reported, not asserted): the victim's p99 under attack <= 1.5x its p99 alone, nothing lost,
// every service below its memory limit.
//
//   BENCH_ALONE_S=30 BENCH_ATTACK_S=60 BENCH_GRACE_S=30 BENCH_WARMUP_S=5 npm run bench:isolation
//   BENCH_VICTIM_RATE=50 BENCH_ATTACK_RATE=200 BENCH_ATTACK_TOKENS=4 BENCH_ABUSE_RATE=10
//   BENCH_LIST_CLIENTS=4 BENCH_LIST_ISSUES=300 BENCH_LIST_DESCRIPTION_CHARS=60000
//   BENCH_BLACKHOLE_WEBHOOKS=50 BENCH_SLOW_WEBHOOKS=50 BENCH_SLOW_DELAY_MS=5000 BENCH_TIMELINE_WINDOW_S=5
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';

import { useProjectNode } from '../../dev/src/provision/index.mjs';
import { startStack } from '../../dev/src/stack.mjs';
import { say, sleep, turboBuild } from '../../dev/src/util.mjs';
import { BENCH_BUILD_FILTERS } from './build.mjs';
import { chartMemoryLimitsMiB, memoryLimitMiB } from './chart-limits.mjs';
import { formatStages, readStageTimes, summarizeStages, watchBus } from './delivery-stages.mjs';
import { keepAliveAgent, send, tally } from './http-client.mjs';
import { describeMachine } from './machine.mjs';
import { SERVICE_NODE_OPTIONS, cpuSeconds, infrastructurePids, machineCpuSeconds, peakRssMb } from './process-stats.mjs';
import { makeCertificate, startReceiver } from './receiver.mjs';
import { setting } from './settings.mjs';
import { openLoop, percentile, preciseTimeMs } from './stats.mjs';
import { nextMessage, startWorker } from './threads.mjs';

await useProjectNode();

const require = createRequire(import.meta.url);

const VICTIM_RATE = setting('BENCH_VICTIM_RATE', 50);
const ATTACK_RATE = setting('BENCH_ATTACK_RATE', 200);
const WARMUP_S = setting('BENCH_WARMUP_S', 5);
const ALONE_S = setting('BENCH_ALONE_S', 30);
const ATTACK_S = setting('BENCH_ATTACK_S', 60);
const GRACE_S = setting('BENCH_GRACE_S', 30);
const ATTACK_TOKENS = Math.max(1, setting('BENCH_ATTACK_TOKENS', 4));
const ABUSE_RATE = setting('BENCH_ABUSE_RATE', 10);
const LIST_CLIENTS = setting('BENCH_LIST_CLIENTS', 4);
const LIST_ISSUES = setting('BENCH_LIST_ISSUES', 300);
const LIST_DESCRIPTION_CHARS = setting('BENCH_LIST_DESCRIPTION_CHARS', 60_000);
const BLACKHOLES = setting('BENCH_BLACKHOLE_WEBHOOKS', 50);
const SLOW = setting('BENCH_SLOW_WEBHOOKS', 50);
const SLOW_DELAY_MS = setting('BENCH_SLOW_DELAY_MS', 5_000);
const TIMELINE_WINDOW_S = setting('BENCH_TIMELINE_WINDOW_S', 5);
const TARGET_P99_RATIO = 1.5;

if (process.env.WORKLANE_SKIP_BUILD !== '1') {
  say('building the services, the CLI and the test helpers (turbo, cached)...');
  const code = await turboBuild(BENCH_BUILD_FILTERS);
  if (code !== 0) process.exit(code);
}

// Loaded after the build: these are compiled packages.
const { API_STACK, api, bootstrapTeam, createToken, startSystem } = require('@worklane/testing');
/** Every service behind the API (the service table's API_STACK), in start order. */
const SERVICES = [...API_STACK];

const memoryLimits = chartMemoryLimitsMiB();
/** A gateway setting's default, from the gateway's own configuration schema (built above). */
const gatewayDefault = (name) => String(require('../../../services/gateway/dist/config.js').configSchema.shape[name].parse(undefined));
const stack = await startStack({ name: 'bench-isolation', fast: true, fresh: true });
process.env.DATABASE_URL = stack.databaseUrl;
const certificate = makeCertificate();

// The victim's events, by the number in their title ("B <n>"): when each was due, how the API
// answered it, and when its delivery arrived.
const victimSends = new Map(); // n -> { intendedAt, status }
const receipts = new Map(); // n -> { receivedAt, createdAt, deliveryId }
let warmupReceipts = 0;
const receiver = await startReceiver(certificate, {
  onDelivery(body, receivedAt, deliveryId) {
    const title = body.issue?.title ?? '';
    if (title.startsWith('B warm ')) warmupReceipts += 1;
    const match = /^B (\d+)$/.exec(title);
    if (match && !receipts.has(Number(match[1]))) receipts.set(Number(match[1]), { receivedAt, createdAt: preciseTimeMs(body.created_at), deliveryId });
  },
});

let system;
let bus;
let endpoints;
let attacker;
let sampler;
let exitCode = 0;

/** Retries a setup call the rate limiter refused (429), after its Retry-After. */
async function unlimited(call) {
  for (let attempt = 0; ; attempt++) {
    const response = await call();
    if (response.status !== 429 || attempt >= 30) return response;
    await sleep(1_000 * Math.max(0.1, Number(response.headers['retry-after'] ?? 1)));
  }
}

function created(response, what) {
  if (response.status !== 201) throw new Error(`${what}: ${response.status} ${response.text.slice(0, 300)}`);
  return response.body;
}

/**
 * Where a service's Prometheus metrics are served: a port of their own when its environment names
 * one (METRICS_PORT and the like), else its HTTP port. The first that answers is kept.
 */
const metricsUrls = new Map();
async function fetchMetrics(handle) {
  const known = metricsUrls.get(handle);
  if (known) return (await fetch(known, { signal: AbortSignal.timeout(2_000) })).text();
  const ports = Object.entries(handle.env)
    .filter(([name]) => /^(METRICS|OPS|ADMIN|MANAGEMENT)(_HTTP)?_PORT$/.test(name))
    .map(([, port]) => port);
  for (const url of [...ports.map((port) => `http://127.0.0.1:${port}/metrics`), `${handle.url}/metrics`]) {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
    if (response?.status !== 200) continue;
    metricsUrls.set(handle, url);
    return response.text();
  }
  throw new Error(`no metrics from ${handle.name}`);
}

/**
 * The queue-like gauges a service exports, by series: its own worklane_* gauges (not the process
 * defaults, nor settings such as limits and replicas) and the event loop's p99 lag.
 */
async function readGauges(handle) {
  const text = await fetchMetrics(handle);
  const gauges = new Set();
  const values = {};
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) gauge$/.exec(line);
    if (type) gauges.add(type[1]);
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!sample || !gauges.has(sample[1])) continue;
    const [, name, labels = '', value] = sample;
    const eventLoop = /^(worklane_process_)?nodejs_eventloop_lag_p99_seconds$/.test(name);
    if (!eventLoop && (!name.startsWith('worklane_') || name.startsWith('worklane_process_') || /_max_|_replicas$|_info$/.test(name))) continue;
    const ownLabels = labels
      .split(',')
      .filter((label) => label && !label.startsWith('service='))
      .join(',');
    values[`${name}${ownLabels ? `{${ownLabels}}` : ''}`] = Number(value);
  }
  return values;
}

/** CPU seconds so far of each service, PostgreSQL, NATS, this benchmark and the whole machine. */
function cpuSnapshot() {
  const services = {};
  for (const name of SERVICES) {
    try {
      services[name] = cpuSeconds(system.services[name].pid);
    } catch {
      services[name] = NaN;
    }
  }
  const perPid = (pids) =>
    Object.fromEntries(
      pids.map((pid) => {
        try {
          return [pid, cpuSeconds(pid)];
        } catch {
          return [pid, 0];
        }
      }),
    );
  const infrastructure = infrastructurePids(stack.dir);
  const bench = process.cpuUsage();
  return {
    at: Date.now(),
    services,
    postgres: perPid(infrastructure.postgres),
    nats: perPid(infrastructure.nats),
    bench: (bench.user + bench.system) / 1e6,
    machine: machineCpuSeconds(),
  };
}

/** Cores each process kept busy between two snapshots (a process started in between counts whole). */
function coresBetween(a, b) {
  const seconds = (b.at - a.at) / 1000;
  const sumDelta = (before, after) => Object.entries(after).reduce((sum, [pid, cpu]) => sum + cpu - (before[pid] ?? 0), 0);
  const cores = Object.fromEntries(SERVICES.map((name) => [name, (b.services[name] - a.services[name]) / seconds]));
  cores.postgres = sumDelta(a.postgres, b.postgres) / seconds;
  cores.nats = sumDelta(a.nats, b.nats) / seconds;
  cores['benchmark (load, receivers)'] = (b.bench - a.bench) / seconds;
  const ours = Object.values(cores).reduce((sum, value) => sum + (Number.isFinite(value) ? value : 0), 0);
  const machineBusy = (b.machine.busy - a.machine.busy) / seconds;
  return { cores, machineBusy, others: Math.max(0, machineBusy - ours) };
}

/**
 * CPU and run-queue time (waiting for a CPU while runnable) so far of every thread of the services,
 * by service and thread (the V8 helper threads of a process together), and of PostgreSQL and NATS,
 * from /proc/<pid>/task/<tid>/schedstat (nanoseconds). On a saturated machine the victim's events
 * wait less for work than for a CPU: this says which threads waited, and how long.
 */
function threadSnapshot() {
  const groups = new Map(); // group -> { cpu, wait } in ms
  /** Every thread of `pid`, each counted under the group `groupOf(its name)` gives. */
  const add = (pid, groupOf) => {
    let tasks;
    try {
      tasks = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      return; // the process is gone
    }
    for (const tid of tasks) {
      try {
        const group = groupOf(fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
        const [cpu, wait] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
        const entry = groups.get(group) ?? { cpu: 0, wait: 0 };
        entry.cpu += cpu / 1e6;
        entry.wait += wait / 1e6;
        groups.set(group, entry);
      } catch {
        // the thread is gone
      }
    }
  };
  // Thread names are cut at 15 characters: "MainThread", "V8Worker" (the garbage collector's helpers
  // among them), a worker thread's own name ("delivery pipeli", "outbox relay"), libuv's pool.
  const threadOf = (comm) => (comm === 'MainThread' ? 'main' : comm === 'V8Worker' ? 'V8 helpers' : comm.startsWith('delivery pipel') ? 'pipeline' : comm);
  for (const name of SERVICES) add(system.services[name].pid, (comm) => `${name} ${threadOf(comm)}`);
  const infrastructure = infrastructurePids(stack.dir);
  for (const pid of infrastructure.postgres) add(pid, () => 'postgres');
  for (const pid of infrastructure.nats) add(pid, () => 'nats');
  // This process: the victim's load and receiver (main), the hostile team and its endpoints (workers).
  add(process.pid, (comm) => `benchmark ${threadOf(comm)}`);
  return { at: Date.now(), groups };
}

/** Per thread group, CPU and run-queue wait in ms per second of wall time between two snapshots. */
function threadRatesBetween(a, b) {
  const seconds = (b.at - a.at) / 1000;
  const rates = new Map();
  for (const [group, after] of b.groups) {
    const before = a.groups.get(group) ?? { cpu: 0, wait: 0 };
    rates.set(group, { cpu: (after.cpu - before.cpu) / seconds, wait: (after.wait - before.wait) / seconds });
  }
  return rates;
}

try {
  say('starting the token, project, webhook, issue, delivery and gateway services...');
  system = await startSystem({
    services: SERVICES,
    env: { NATS_URL: stack.natsUrl, WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn', NODE_OPTIONS: SERVICE_NODE_OPTIONS },
    serviceEnv: {
      delivery: { NODE_EXTRA_CA_CERTS: certificate.certPath },
      // The test system lets its suites' bursts through; the attack must meet the gateway's defaults.
      gateway: { RATE_LIMIT_BURST: gatewayDefault('RATE_LIMIT_BURST'), RATE_LIMIT_TEAM_BURST: gatewayDefault('RATE_LIMIT_TEAM_BURST') },
    },
  });
  const pids = Object.fromEntries(SERVICES.map((name) => [name, system.services[name].pid]));

  // Peak RSS and queue gauges, sampled every second from here on.
  const peakRss = Object.fromEntries(SERVICES.map((name) => [name, 0]));
  const gaugePeaks = {}; // phase -> series -> peak
  let phase = 'setup';
  const sample = async () => {
    for (const name of SERVICES) {
      try {
        peakRss[name] = Math.max(peakRss[name], peakRssMb(pids[name]));
      } catch {
        // the process is gone: its last sample stands
      }
    }
    for (const name of ['issue', 'delivery', 'gateway']) {
      try {
        const gauges = await readGauges(system.services[name]);
        gaugePeaks[phase] ??= {};
        for (const [series, value] of Object.entries(gauges)) {
          const key = `${name} ${series}`;
          gaugePeaks[phase][key] = Math.max(gaugePeaks[phase][key] ?? -Infinity, value);
        }
      } catch {
        // not answering right now: a gap in the samples
      }
    }
  };
  let sampling = false;
  sampler = setInterval(() => {
    if (sampling) return;
    sampling = true;
    sample().finally(() => (sampling = false));
  }, 1_000);

  // The two teams.
  const [victim, hostile] = await Promise.all([bootstrapTeam(system, { teamName: 'Victim team' }), bootstrapTeam(system, { teamName: 'Hostile team' })]);
  const wanted = ATTACK_TOKENS - 1 + 1 + LIST_CLIENTS;
  const extra = await Promise.allSettled(
    Array.from({ length: wanted }, (_, n) => createToken(system, { teamId: hostile.team_id, email: hostile.email, name: `hostile ${n + 1}` })),
  );
  const extraTokens = extra.filter((r) => r.status === 'fulfilled').map((r) => r.value.token);
  if (extraTokens.length < wanted)
    say(
      `note: ${wanted - extraTokens.length} of ${wanted} extra hostile tokens were refused (${extra.find((r) => r.status === 'rejected')?.reason?.message?.split('\n')[0]}); tokens are shared`,
    );
  const tokenAt = (n) => (n === 0 ? hostile.token : (extraTokens[(n - 1) % Math.max(1, extraTokens.length)] ?? hostile.token));
  const eventTokens = Array.from({ length: ATTACK_TOKENS }, (_, n) => tokenAt(n));
  const abuseToken = tokenAt(ATTACK_TOKENS);
  const listTokens = Array.from({ length: LIST_CLIENTS }, (_, n) => tokenAt(ATTACK_TOKENS + 1 + n));

  const victimClient = api(system, victim.token);
  const victimProject = created(await victimClient.post(`/teams/${victim.team_id}/organizations/${victim.organization_id}/projects`, { name: 'Victim' }), 'victim project');
  created(
    await victimClient.post(`/teams/${victim.team_id}/webhooks`, { url: receiver.ipUrl('/victim'), events: ['issue.created', 'issue.updated'], secret: 'victim-signing-secret' }),
    'victim webhook',
  );

  const hostileClient = api(system, hostile.token);
  const projectsPath = `/teams/${hostile.team_id}/organizations/${hostile.organization_id}/projects`;
  const floodProject = created(await hostileClient.post(projectsPath, { name: 'Flood' }), 'hostile project');
  const listProject = created(await hostileClient.post(projectsPath, { name: 'Large lists' }), 'hostile list project');

  // Large issues to list, made before the hostile webhooks exist (so they cost no deliveries).
  // Control characters take six bytes each in JSON; letters if they are refused, and shorter
  // descriptions while the length is refused.
  say(`seeding ${LIST_ISSUES} hostile issues with ${LIST_DESCRIPTION_CHARS}-character descriptions...`);
  const seedStarted = Date.now();
  const listIssuesPath = `${projectsPath}/${listProject.id}/issues`;
  let seeded = 0;
  let seedRefused = 0;
  const seedOne = async (n, description) => {
    const response = await unlimited(() => hostileClient.post(listIssuesPath, { title: `Large ${n}`, description }));
    if (response.status === 201) seeded += 1;
    else if (response.status !== 422 && ++seedRefused <= 2) say(`seeding: ${response.status} ${response.text.slice(0, 200)}`);
    return response.status;
  };
  let filler = '';
  search: for (let length = LIST_DESCRIPTION_CHARS; LIST_ISSUES > 0 && length >= 1_000; length = Math.floor(length / 2)) {
    for (const char of ['\u0001', 'x']) {
      const status = await seedOne(0, char.repeat(length));
      if (status === 201) filler = char.repeat(length);
      if (status !== 422) break search;
    }
  }
  let nextSeed = 1;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (filler && nextSeed < LIST_ISSUES) await seedOne(nextSeed++, filler);
    }),
  );
  say(`seeded ${seeded} issues with ${filler.length}-character descriptions in ${((Date.now() - seedStarted) / 1000).toFixed(1)} s`);
  const descriptionKind = filler.startsWith('\u0001') ? 'control characters' : 'letters';

  // The hostile team's endpoints, and webhooks on them.
  endpoints = await startWorker('./hostile-endpoints.mjs', { cert: certificate.cert, key: certificate.key, blackholes: BLACKHOLES, slow: SLOW, delayMs: SLOW_DELAY_MS });
  const hostileWebhookIds = [];
  const webhookRefusals = {};
  for (const [n, url] of [...endpoints.ready.blackholeUrls, ...endpoints.ready.slowUrls].entries()) {
    const response = await unlimited(() =>
      hostileClient.post(`/teams/${hostile.team_id}/webhooks`, { url, events: ['issue.created', 'issue.updated'], secret: `hostile-signing-secret-${n}` }),
    );
    if (response.status === 201) hostileWebhookIds.push(response.body.id);
    else tally(webhookRefusals, `${response.status} ${response.body?.message ?? response.text.slice(0, 120)}`);
  }
  say(`hostile webhooks: ${hostileWebhookIds.length} of ${BLACKHOLES + SLOW} created${Object.keys(webhookRefusals).length ? `; refused: ${JSON.stringify(webhookRefusals)}` : ''}`);

  attacker = await startWorker('./hostile-team.mjs', {
    gatewayUrl: system.gatewayUrl,
    teamId: hostile.team_id,
    organizationId: hostile.organization_id,
    eventProjectId: floodProject.id,
    listProjectId: listProject.id,
    webhookIds: hostileWebhookIds.slice(0, 4),
    eventTokens,
    abuseToken,
    listTokens,
    eventRate: ATTACK_RATE,
    abuseRate: ABUSE_RATE,
    seconds: ATTACK_S,
    maxPagesPerWalk: 200,
  });

  // The victim's traffic: even numbers create an issue, odd ones retitle one it created. Sockets
  // are not capped low, so a slow API makes requests wait in the gateway, not in this client.
  const victimAgent = keepAliveAgent(1_024);
  const victimIssuesUrl = `${system.gatewayUrl}/api/v1/teams/${victim.team_id}/organizations/${victim.organization_id}/projects/${victimProject.id}/issues`;
  const victimHeaders = { authorization: `Bearer ${victim.token}`, 'content-type': 'application/json' };
  const victimIssues = [];
  const victimEvent = async (title, n) => {
    if (n % 2 === 1 && victimIssues.length > 0) {
      const id = victimIssues[n % victimIssues.length];
      return send(`${victimIssuesUrl}/${id}`, { method: 'PATCH', agent: victimAgent, headers: victimHeaders, body: JSON.stringify({ title }) });
    }
    const response = await send(victimIssuesUrl, {
      method: 'POST',
      agent: victimAgent,
      headers: victimHeaders,
      body: JSON.stringify({ title, priority: 'medium' }),
      keepBody: true,
    });
    if (response.status === 201) victimIssues.push(JSON.parse(response.text).id);
    return response;
  };

  const settle = async (what, done, timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) await sleep(50);
    if (!done()) say(`note: ${what} not settled after ${timeoutMs / 1000} s`);
  };
  const quiet = async () => {
    const gauges = { ...(await readGauges(system.services.issue).catch(() => ({}))), ...(await readGauges(system.services.delivery).catch(() => ({}))) };
    return (gauges.worklane_outbox_backlog ?? 0) === 0 && (gauges.worklane_delivery_consumer_pending ?? 0) === 0;
  };
  let isQuiet = false;
  const quietDeadline = Date.now() + 60_000;
  while (!(isQuiet = await quiet()) && Date.now() < quietDeadline) await sleep(250);
  if (!isQuiet) say('note: the outbox or the delivery consumer still had a backlog after the setup');

  let warmupCommitted = 0;
  if (WARMUP_S > 0) {
    say(`warm-up: the victim alone, ${VICTIM_RATE} events/s for ${WARMUP_S} s...`);
    await openLoop(VICTIM_RATE, WARMUP_S, async (n) => {
      const response = await victimEvent(`B warm ${n}`, n);
      if (response.status === 200 || response.status === 201) warmupCommitted += 1;
    });
    await settle('the warm-up deliveries', () => warmupReceipts >= warmupCommitted, 60_000);
  }

  // When each event reaches the bus, for the victim's stage breakdown (delivery-stages.mjs).
  bus = await watchBus(stack.natsUrl);

  // Phase 1 and 2: one steady schedule for the victim; the attack starts ALONE_S into it.
  say(`phase 1: the victim alone, ${VICTIM_RATE} events/s for ${ALONE_S} s; phase 2: ${ATTACK_S} s under attack`);
  const snapshots = { start: cpuSnapshot() };
  const threads = { start: threadSnapshot() };
  let firstWindowTimer;
  phase = 'alone';
  const phaseOneStart = Date.now();
  let attackStart = Infinity;
  let attackResults;
  const attackDone = nextMessage(attacker.worker, (message) => message.done).then((message) => (attackResults = message.results));
  const attackStarted = nextMessage(attacker.worker, (message) => message.started).then((message) => {
    attackStart = message.at;
    phase = 'attack';
    snapshots.attack = cpuSnapshot();
    threads.attack = threadSnapshot();
    firstWindowTimer = setTimeout(() => (threads.firstWindowEnd = threadSnapshot()), TIMELINE_WINDOW_S * 1000);
    say(
      `phase 2: the hostile team fires ${ATTACK_RATE} events/s over ${eventTokens.length} tokens at ${hostileWebhookIds.length} webhooks, ${ABUSE_RATE} refused bodies/s and ${LIST_CLIENTS} list clients...`,
    );
  });
  const startTimer = setTimeout(() => attacker.worker.postMessage('start'), ALONE_S * 1000);
  await openLoop(VICTIM_RATE, ALONE_S + ATTACK_S, async (n, intendedAt) => {
    const record = { intendedAt, status: null };
    victimSends.set(n, record);
    const response = await victimEvent(`B ${n}`, n);
    record.status = response.status || response.error;
    record.answeredAt = Date.now();
  });
  clearTimeout(startTimer);
  await attackStarted;
  const attackEnd = attackStart + ATTACK_S * 1000;
  snapshots.attackEnd = cpuSnapshot();
  clearTimeout(firstWindowTimer);
  threads.attackEnd = threadSnapshot();
  // The grace time runs from the victim's last answer, however late the API gave it.
  const victimDoneAt = Date.now();
  say(`the attack is over; waiting up to ${GRACE_S} s for the victim's stragglers...`);
  phase = 'grace';
  const committed = [...victimSends].filter(([, record]) => record.status === 200 || record.status === 201).map(([n]) => n);
  await settle("the victim's deliveries", () => committed.every((n) => receipts.has(n)), Math.max(0, victimDoneAt + GRACE_S * 1000 - Date.now()));
  await attackDone;
  snapshots.end = cpuSnapshot();
  phase = 'done';
  clearInterval(sampler);
  sampler = undefined;
  while (sampling) await sleep(20);
  await sample();
  const hostileEndpoints = await new Promise((resolve) => {
    endpoints.worker.once('message', (message) => resolve(message.stats));
    endpoints.worker.postMessage('stats');
  });
  victimAgent.destroy();
  await bus.close();
  // The victim's deliveries stage by stage (outbox row, bus, delivery row, first attempt, receipt).
  const stageTimes = new Map(); // delivery id -> timestamps
  try {
    const byDelivery = new Map([...receipts.values()].filter((receipt) => receipt.deliveryId).map((receipt) => [receipt.deliveryId, receipt]));
    for (const times of await readStageTimes({ issueDb: system.serviceEnv.issue, deliveryDb: system.serviceEnv.delivery, receipts: byDelivery, seenOnBus: bus.seen }))
      stageTimes.set(times.id, times);
  } catch (error) {
    say(`note: no stage breakdown: ${error?.message ?? error}`);
  }

  const deaths = SERVICES.filter((name) => system.services[name].process.exitCode !== null || system.services[name].process.signalCode !== null);

  // Figures.
  // An event of the victim's is lost when its delivery never arrived: committed and not delivered,
  // or refused by the API (5xx, no answer) and so never made at all.
  const phaseFigures = (inPhase) => {
    const sends = [...victimSends].filter(([, record]) => inPhase(record.intendedAt));
    const statuses = {};
    const commitToReceipt = [];
    const dueToReceipt = [];
    const dueToAnswer = [];
    let ok = 0;
    let notDelivered = 0;
    let refused = 0;
    let afterAttack = 0;
    for (const [n, record] of sends) {
      tally(statuses, record.status);
      dueToAnswer.push(record.answeredAt - record.intendedAt);
      const accepted = record.status === 200 || record.status === 201;
      if (accepted) ok += 1;
      const receipt = receipts.get(n);
      if (!receipt) {
        if (accepted) notDelivered += 1;
        else refused += 1;
        continue;
      }
      commitToReceipt.push(receipt.receivedAt - receipt.createdAt);
      dueToReceipt.push(receipt.receivedAt - record.intendedAt);
      if (receipt.receivedAt > attackEnd) afterAttack += 1;
    }
    commitToReceipt.sort((a, b) => a - b);
    dueToReceipt.sort((a, b) => a - b);
    dueToAnswer.sort((a, b) => a - b);
    const p = (sorted) => ({ p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN });
    return {
      sent: sends.length,
      ok,
      received: commitToReceipt.length,
      statuses,
      notDelivered,
      refused,
      lost: notDelivered + refused,
      afterAttack,
      commit: p(commitToReceipt),
      due: p(dueToReceipt),
      answer: p(dueToAnswer),
    };
  };
  // The victim's latency by window of the commit time, from the start of phase 1 to the end of the
  // grace time: a tail that only the attack's first seconds cause shows in one window.
  const timeline = () => {
    const commits = [...receipts.values()].filter((receipt) => Number.isFinite(receipt.createdAt) && receipt.createdAt >= phaseOneStart);
    const windows = new Map();
    const windowReceipts = new Map();
    for (const receipt of commits) {
      const index = Math.floor((receipt.createdAt - attackStart) / (TIMELINE_WINDOW_S * 1000));
      if (!windows.has(index)) {
        windows.set(index, []);
        windowReceipts.set(index, []);
      }
      windows.get(index).push(receipt.receivedAt - receipt.createdAt);
      windowReceipts.get(index).push(receipt);
    }
    return [...windows.keys()]
      .sort((a, b) => a - b)
      .map((index) => {
        const sorted = windows.get(index).sort((a, b) => a - b);
        const from = index * TIMELINE_WINDOW_S;
        const label = `attack ${from >= 0 ? '+' : ''}${from}..${from + TIMELINE_WINDOW_S} s`;
        const stages = summarizeStages(
          windowReceipts
            .get(index)
            .map((receipt) => stageTimes.get(receipt.deliveryId))
            .filter(Boolean),
        ).stages.slice(0, 4);
        return { label, received: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1], stages };
      });
  };
  // The victim's stages in three parts of the run, by commit time: alone, the attack's first
  // window, the rest of the attack and the grace time.
  const stagesOf = (inPart) =>
    summarizeStages(
      [...receipts.values()]
        .filter((r) => r.createdAt >= phaseOneStart && inPart(r.createdAt))
        .map((r) => stageTimes.get(r.deliveryId))
        .filter(Boolean),
    );
  const firstWindowEnd = attackStart + TIMELINE_WINDOW_S * 1000;
  const stageParts = [
    ['the victim alone', stagesOf((at) => at < attackStart)],
    [`the victim in the attack's first ${TIMELINE_WINDOW_S} s`, stagesOf((at) => at >= attackStart && at < firstWindowEnd)],
    ['the victim in the rest of the attack and the grace time', stagesOf((at) => at >= firstWindowEnd)],
  ];
  const alone = phaseFigures((at) => at < attackStart);
  const attack = phaseFigures((at) => at >= attackStart);
  const victimLost = alone.lost + attack.lost;
  const cpu = {
    alone: coresBetween(snapshots.start, snapshots.attack ?? snapshots.attackEnd),
    attack: coresBetween(snapshots.attack ?? snapshots.start, snapshots.attackEnd),
    grace: coresBetween(snapshots.attackEnd, snapshots.end),
  };

  // Figures from machines of different speeds differ by more than a change moves them: say which.
  const machine = await describeMachine(stack);
  const f = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
  const pass = (ok) => (ok ? 'met' : 'MISSED');
  const statusList = (counts) =>
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([status, count]) => `${status} x${count}`)
      .join(', ') || 'none';
  const ratio = attack.commit.p99 / alone.commit.p99;
  const rssOk = SERVICES.every((name) => !(peakRss[name] >= (memoryLimitMiB(memoryLimits, name) ?? Infinity)));
  const lines = [
    '',
    `Isolation benchmark: victim ${VICTIM_RATE} events/s to 1 healthy HTTPS webhook; attacker ${ATTACK_RATE} events/s to ${hostileWebhookIds.length} webhooks (${BLACKHOLES} never answer, ${SLOW} answer after ${SLOW_DELAY_MS} ms)`,
    `machine: ${machine}`,
    '',
    `victim, event commit to receipt (from the request's due time in brackets):`,
    `  alone (${ALONE_S} s, ${alone.received} of ${alone.sent} events received):        p50 ${f(alone.commit.p50)} ms  p99 ${f(alone.commit.p99)} ms  max ${f(alone.commit.max)} ms   [p50 ${f(alone.due.p50)}  p99 ${f(alone.due.p99)} ms]`,
    `  under attack (${ATTACK_S} s, ${attack.received} of ${attack.sent} events received): p50 ${f(attack.commit.p50)} ms  p99 ${f(attack.commit.p99)} ms  max ${f(attack.commit.max)} ms   [p50 ${f(attack.due.p50)}  p99 ${f(attack.due.p99)} ms]`,
    `  p99 under attack / alone: ${f(ratio, 2)} (target <= ${TARGET_P99_RATIO}: ${pass(ratio <= TARGET_P99_RATIO)})`,
    `  lost: ${victimLost} (target 0: ${pass(victimLost === 0)}): ${alone.notDelivered + attack.notDelivered} committed and not received within ${GRACE_S} s of the victim's last answer, ${alone.refused + attack.refused} refused by the API; received only after the attack ended: ${attack.afterAttack}`,
    `  victim API answers: alone ${statusList(alone.statuses)}, p50 ${f(alone.answer.p50)} ms p99 ${f(alone.answer.p99)} ms from the due time; under attack ${statusList(attack.statuses)}, p50 ${f(attack.answer.p50)} ms p99 ${f(attack.answer.p99)} ms`,
    '',
    'hostile team:',
    `  events: ${attackResults.events.sent} sent (${attackResults.events.creates} creates, ${attackResults.events.updates} updates) over ${eventTokens.length} tokens: ${statusList(attackResults.events.statuses)}; refused by the rate limit (429): ${attackResults.events.statuses['429'] ?? 0}`,
    ...Object.entries(attackResults.abuse).map(
      ([kind, record]) => `  ${kind} (expect ${record.expect}): ${statusList(record.statuses)}, largest answer ${record.maxResponseBytes} bytes`,
    ),
    `  lists (${seeded} issues with ${filler.length} ${descriptionKind} each, webhooks, deliveries): ${attackResults.lists.requests} pages in ${attackResults.lists.walks} walks (${attackResults.lists.maxPagesInWalk} pages at most, ${attackResults.lists.walksCutShort} cut at 200): ${statusList(attackResults.lists.statuses)}; largest page ${f(attackResults.lists.maxResponseBytes / 2 ** 20, 2)} MB, ${f(attackResults.lists.bytes / 2 ** 20, 0)} MB in all`,
    `  its endpoints: ${hostileEndpoints.blackholeConnections} connections to the silent ones (${hostileEndpoints.blackholeOpen} still open), ${hostileEndpoints.slowRequests} requests to the slow ones (${hostileEndpoints.slowAnswered} answered, ${hostileEndpoints.slowAbandoned} given up by the sender)`,
    '',
    `peak RSS (VmHWM) against the chart's memory limit (target: below it): ${SERVICES.map((name) => `${name} ${f(peakRss[name])}/${f(memoryLimitMiB(memoryLimits, name), 0)} MB`).join(', ')}: ${pass(rssOk)}`,
    ...(deaths.length ? [`SERVICES THAT EXITED DURING THE RUN: ${deaths.join(', ')}`] : []),
    '',
    ...(() => {
      // CPU and run-queue wait of every thread group: alone, in the attack's first window, in the rest of the attack.
      if (!threads.attack || !threads.firstWindowEnd) return [];
      const parts = [
        threadRatesBetween(threads.start, threads.attack),
        threadRatesBetween(threads.attack, threads.firstWindowEnd),
        threadRatesBetween(threads.firstWindowEnd, threads.attackEnd),
      ];
      // Threads that neither ran nor waited (idle pools) are left out.
      const groups = [...threads.attackEnd.groups.keys()].sort().filter((group) => parts.some((rates) => (rates.get(group)?.cpu ?? 0) + (rates.get(group)?.wait ?? 0) >= 1));
      const width = Math.max(...groups.map((group) => group.length));
      const cell = (rate) => (rate ? `${f(rate.cpu, 0).padStart(4)} ${f(rate.wait, 0).padStart(4)}` : '   -    -');
      return [
        `threads, CPU used and time waiting for a CPU while runnable, in ms per second (alone | attack's first ${TIMELINE_WINDOW_S} s | rest of the attack):`,
        `  ${'thread'.padEnd(width)}  ${['alone', 'first window', 'rest'].map((title) => `${title.padStart(9)}`).join('   ')}`,
        `  ${''.padEnd(width)}  ${parts.map(() => ' cpu wait').join('   ')}`,
        ...groups.map((group) => `  ${group.padEnd(width)}  ${parts.map((rates) => cell(rates.get(group))).join('   ')}`),
      ];
    })(),
    'CPU (cores busy) per phase:',
    ...Object.entries(cpu).map(
      ([name, figures]) =>
        `  ${name.padEnd(7)} ${Object.entries(figures.cores)
          .map(([process, cores]) => `${process} ${f(cores, 2)}`)
          .join(', ')}; machine ${f(figures.machineBusy, 2)} of ${os.cpus().length}, others ${f(figures.others, 2)}`,
    ),
    `victim, event commit to receipt per ${TIMELINE_WINDOW_S} s of the run (when the attack's effect comes and goes), and each stage's p99/max in ms (to bus | to stored | to attempt | to received):`,
    ...timeline().map(
      (window) =>
        `  ${window.label.padEnd(20)} ${String(window.received).padStart(4)} received  p50 ${f(window.p50).padStart(5)} ms  p99 ${f(window.p99).padStart(6)} ms  max ${f(window.max).padStart(6)} ms   ${window.stages
          .map(({ values }) => `${f(percentile(values, 99), 0)}/${f(values[values.length - 1], 0)}`.padStart(9))
          .join(' |')}`,
    ),
    ...stageParts.flatMap(([title, summary]) => formatStages(summary, title)),
    'queue gauges, peak per phase:',
    ...[...new Set(Object.values(gaugePeaks).flatMap((peaks) => Object.keys(peaks)))]
      .sort()
      .map((series) => `  ${series}: ${['alone', 'attack', 'grace'].map((name) => `${name} ${f(gaugePeaks[name]?.[series], 3)}`).join(', ')}`),
  ];
  // Why requests failed, in the services' own words.
  if (alone.refused + attack.refused > 0 || Object.keys(attackResults.events.statuses).some((status) => status >= '500')) {
    lines.push('first errors logged:');
    for (const name of SERVICES) {
      const errors = system.services[name]
        .logs()
        .split('\n')
        .filter((line) => /"level":"(error|fatal)"|"level":(50|60)\b/.test(line));
      for (const line of errors.slice(0, 2)) lines.push(`  ${name}: ${line.slice(0, 400)}`);
    }
    if (!lines[lines.length - 1].startsWith('  ')) lines.push('  none at level error or fatal');
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  const round = (value) => (Number.isFinite(value) ? Math.round(value * 10) / 10 : null);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'isolation',
      victim_p50_alone_ms: round(alone.commit.p50),
      victim_p99_alone_ms: round(alone.commit.p99),
      victim_p50_attack_ms: round(attack.commit.p50),
      victim_p99_attack_ms: round(attack.commit.p99),
      victim_lost: victimLost,
      max_rss_mb: Object.fromEntries(SERVICES.map((name) => [name, round(peakRss[name])])),
    })}\n`,
  );
} catch (error) {
  say(`benchmark failed: ${error?.stack ?? error}`);
  exitCode = 1;
} finally {
  if (sampler) clearInterval(sampler);
  await bus?.close();
  await attacker?.worker.terminate();
  if (endpoints) {
    endpoints.worker.postMessage('close');
    await Promise.race([nextMessage(endpoints.worker, (message) => message.closed), sleep(5_000)]);
    await endpoints.worker.terminate();
  }
  await system?.stop().catch((error) => say(`could not stop the services: ${error?.message ?? error}`));
  await receiver.close();
  fs.rmSync(certificate.dir, { recursive: true, force: true });
  await stack.stop();
}
process.exit(exitCode);
