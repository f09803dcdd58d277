#!/usr/bin/env node
// `npm run bench:curve`: how the cost of a delivery grows with the fan-out, with the number of
// tenants and with the event rate. Starts PostgreSQL (production settings: fsync and synchronous
// commit on, unless BENCH_FAST_DB=1) and NATS (tools/dev), every service but the console
// (bench-system.mjs: the gateway's rate limits and the per-team fan-out budget run with their
// limits out of the way) and local HTTPS receivers on 127.0.0.1, then runs three curves, each
// point an open-loop run of issue creates through the gateway at a constant event rate:
//   rate:    one team with BENCH_CURVE_RATE_WEBHOOKS (2) webhooks, at BENCH_CURVE_RATES events/s
//            (50,100,200,400): latency against rate, up to and past where the machine saturates;
//   fan-out: one team whose events go to BENCH_CURVE_FANOUTS (1,10,100) webhooks, each on a
//            receiver of its own, at BENCH_CURVE_FANOUT_RATE (5) events/s;
//   tenants: BENCH_CURVE_TEAMS (1,100,1000) teams with BENCH_CURVE_WEBHOOKS_PER_TEAM (5)
//            webhooks each (a receiver per team), events spread over the teams in turn at
//            BENCH_CURVE_TENANT_RATE (40) events/s.
// The fan-out and tenant rates are low enough that the machine is not saturated at the largest
// point: those curves measure the cost of a delivery, not queueing. Webhooks and teams are added
// between points (teams, organizations and tokens through the token and project services' gRPC
// APIs with the operator CLI's clients, projects and webhooks through the API: tenants.mjs).
// Before each point every team in it gets an event and the point's rate runs BENCH_CURVE_WARMUP_S
// (2) s, waited for; then the system's idle CPU is taken for BENCH_CURVE_IDLE_S (3) s; then the
// point runs BENCH_CURVE_POINT_S (15) s (fan-out points BENCH_CURVE_FANOUT_POINT_S, 30 s) and
// every delivery of it is waited for. A point gives:
// commit-to-receipt p50/p99 (the event's created_at to the receiver's arrival), CPU per delivery
// summed over every process of the system (services, PostgreSQL, NATS) from the start of the load
// until its last delivery arrived, gross and net of the idle CPU, with the processes' shares, and
// the machine's load from other work. It prints the tables, where the cost per delivery bends and
// which processes make it bend, writes two SVG charts (BENCH_CURVE_SVG_DIR, docs/ by default;
// empty: none) and ends with one JSON line {"bench":"curve",…}. About 6 to 8 minutes.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { useProjectNode } from '../../dev/src/provision/index.mjs';
import { startStack } from '../../dev/src/stack.mjs';
import { repoRoot, say, sleep, turboBuild } from '../../dev/src/util.mjs';
import { startBenchSystem } from './bench-system.mjs';
import { BENCH_BUILD_FILTERS } from './build.mjs';
import { startCpuMeter } from './cpu-meter.mjs';
import { costBend, deliveryPaths, describeBend, idleCores, markdownTable, parseList, parseMetrics, summarizePoint } from './curve-figures.mjs';
import { keepAliveAgent, send } from './http-client.mjs';
import { describeMachine } from './machine.mjs';
import { makeCertificate, startReceiver } from './receiver.mjs';
import { setting } from './settings.mjs';
import { inTurn, openLoop, preciseTimeMs, waitUntil } from './stats.mjs';
import { chartSvg } from './svg-chart.mjs';
import { addWebhooks, teamMaker, teamWithProject } from './tenants.mjs';

await useProjectNode();

const require = createRequire(import.meta.url);

const RATES = parseList('BENCH_CURVE_RATES', process.env.BENCH_CURVE_RATES || '50,100,200,400');
const RATE_WEBHOOKS = setting('BENCH_CURVE_RATE_WEBHOOKS', 2);
const FANOUTS = parseList('BENCH_CURVE_FANOUTS', process.env.BENCH_CURVE_FANOUTS || '1,10,100');
const FANOUT_RATE = setting('BENCH_CURVE_FANOUT_RATE', 5);
const TEAMS = parseList('BENCH_CURVE_TEAMS', process.env.BENCH_CURVE_TEAMS || '1,100,1000');
const WEBHOOKS_PER_TEAM = setting('BENCH_CURVE_WEBHOOKS_PER_TEAM', 5);
const TENANT_RATE = setting('BENCH_CURVE_TENANT_RATE', 40);
const POINT_S = setting('BENCH_CURVE_POINT_S', 15);
// At the fan-out series' low event rate a point needs longer for enough events at one webhook.
const FANOUT_POINT_S = setting('BENCH_CURVE_FANOUT_POINT_S', 30);
const WARMUP_S = setting('BENCH_CURVE_WARMUP_S', 2);
const IDLE_S = setting('BENCH_CURVE_IDLE_S', 3);
const DRAIN_TIMEOUT_S = setting('BENCH_CURVE_DRAIN_TIMEOUT_S', 120);
const SETUP_PARALLEL = setting('BENCH_CURVE_SETUP_PARALLEL', 8);
const FAST_DB = process.env.BENCH_FAST_DB === '1';
const SVG_DIR = process.env.BENCH_CURVE_SVG_DIR ?? path.join(repoRoot, 'docs');
/** The warm-up's rate when every team of a point must get an event: at least this many a second. */
const WARMUP_MIN_RATE = 100;

if (process.env.WORKLANE_SKIP_BUILD !== '1') {
  say('building the services, the CLI and the test helpers (turbo, cached)...');
  const code = await turboBuild(BENCH_BUILD_FILTERS);
  if (code !== 0) process.exit(code);
}

const loadAtStart = os.loadavg();
const stack = await startStack({ name: 'bench-curve', fast: FAST_DB, fresh: true });
process.env.DATABASE_URL = stack.databaseUrl;
const certificate = makeCertificate();

// Deliveries by run label: every issue's title is "Curve <label> <n>".
const tallies = new Map();
const tally = (label) => {
  let entry = tallies.get(label);
  if (!entry) tallies.set(label, (entry = { received: 0, latencies: [] }));
  return entry;
};
const onDelivery = (body, receivedAt) => {
  const label = /^Curve (\S+) \d+$/.exec(body.issue?.title ?? '')?.[1];
  if (!label) return;
  const entry = tally(label);
  entry.received += 1;
  entry.latencies.push(receivedAt - preciseTimeMs(body.created_at));
};
const receivers = [];
const newReceiver = async () => {
  const receiver = await startReceiver(certificate, { onDelivery });
  receivers.push(receiver);
  return receiver;
};

const agent = keepAliveAgent(64);
let failedCreates = 0;
/** One issue create as `target`'s team; resolves true when it was created. */
async function createIssue(target, label, n) {
  const response = await send(target.issuesUrl, {
    method: 'POST',
    agent,
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: `Curve ${label} ${n}`, priority: 'medium' }),
    keepBody: true,
  });
  if (response.status === 201) return true;
  if (++failedCreates <= 3) say(`issue create answered ${response.status || response.error}: ${(response.text ?? '').slice(0, 200)}`);
  return false;
}

/** Open loop at `rate` for `seconds` (or `count` events), events dealt to `targets` in turn; resolves to the events created. */
async function load(targets, label, rate, seconds) {
  let created = 0;
  await openLoop(rate, seconds, async (i) => {
    if (await createIssue(targets[i % targets.length], label, i)) created += 1;
  });
  return created;
}

async function waitForDeliveries(label, expected) {
  const entry = tally(label);
  try {
    await waitUntil(
      () => entry.received >= expected,
      DRAIN_TIMEOUT_S * 1000,
      `the deliveries of ${label}`,
      () => `(${entry.received} of ${expected})`,
    );
  } catch (error) {
    say(`${error.message}: the point counts what arrived`);
  }
  return entry;
}

let system;
let services;
/** The delivery service's metrics now (parseMetrics). */
const deliveryMetrics = async () => parseMetrics(await (await fetch(`${system.services.delivery.metricsUrl}/metrics`)).text());
/** One point: warm-up, the idle CPU, then the measured run. `fanOut`: webhooks per event. */
async function runPoint({ label, targets, fanOut, rate, seconds = POINT_S }) {
  const warmEvents = Math.max(targets.length, Math.round(rate * WARMUP_S));
  if (warmEvents > 0) {
    const warmRate = Math.max(rate, Math.min(WARMUP_MIN_RATE, warmEvents / Math.max(1, WARMUP_S)));
    const warmCreated = await load(targets, `warm-${label}`, warmRate, warmEvents / warmRate);
    await waitForDeliveries(`warm-${label}`, warmCreated * fanOut);
  }
  const idleMeter = await startCpuMeter({ system, services, stackDir: stack.dir });
  await sleep(IDLE_S * 1000);
  const idle = idleCores(await idleMeter.stop());
  const metricsBefore = await deliveryMetrics();
  const meter = await startCpuMeter({ system, services, stackDir: stack.dir, databaseUrl: stack.databaseUrl });
  const events = await load(targets, label, rate, seconds);
  const entry = await waitForDeliveries(label, events * fanOut);
  const cpu = await meter.stop();
  const paths = deliveryPaths(metricsBefore, await deliveryMetrics());
  return {
    label,
    rate,
    fanOut,
    teams: new Set(targets.map((target) => target.team_id)).size,
    ...summarizePoint({ latencies: entry.latencies, events, deliveries: events * fanOut, cpu, idle, paths }),
  };
}

const f = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const int = (value) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const pointLine = (point) =>
  `  ${point.label}: ${point.events} events, ${point.received}/${point.deliveries} deliveries in ${f(point.seconds)} s, p50 ${f(point.p50Ms, 0)} ms p99 ${f(point.p99Ms, 0)} ms, ` +
  `CPU per delivery ${f(point.cpuMsPerDelivery, 2)} ms gross ${f(point.netCpuMsPerDelivery, 2)} ms net, machine ${f(point.machineBusyCores, 2)} cores busy (${f(point.otherCores, 2)} other work); ` +
  `attempts ${point.paths.atOnce} at once, ${point.paths.claimed} claimed, ${f(point.paths.meanWaitMs)} ms mean wait for a slot`;

let exitCode = 0;
const curves = { rate: [], fanout: [], tenants: [] };
try {
  say('starting the token, project, webhook, issue, delivery and gateway services...');
  system = await startBenchSystem({ stack, certificate });
  services = [...require('@worklane/testing').API_STACK];
  const maker = await teamMaker(system);
  try {
    // 1. Latency against rate: one team, RATE_WEBHOOKS webhooks on one receiver.
    const rateTeam = await teamWithProject(system, maker, 'Curve rate');
    const rateReceiver = await newReceiver();
    await addWebhooks(
      rateTeam,
      Array.from({ length: RATE_WEBHOOKS }, (_, i) => rateReceiver.ipUrl(`/rate-${i + 1}`)),
    );
    for (const rate of RATES) {
      say(`rate: ${rate} events/s, ${RATE_WEBHOOKS} webhooks each, ${POINT_S} s...`);
      const point = await runPoint({ label: `rate-${rate}`, targets: [rateTeam], fanOut: RATE_WEBHOOKS, rate });
      curves.rate.push({ x: rate, ...point });
      say(pointLine(point));
    }

    // 2. Fan-out: one team, its webhooks added between points, each on a receiver of its own.
    const fanTeam = await teamWithProject(system, maker, 'Curve fan-out');
    let fanWebhooks = 0;
    for (const fanOut of FANOUTS) {
      const urls = [];
      for (; fanWebhooks < fanOut; fanWebhooks++) urls.push((await newReceiver()).ipUrl(`/fanout-${fanWebhooks + 1}`));
      await addWebhooks(fanTeam, urls);
      say(`fan-out: ${fanOut} webhooks per event at ${FANOUT_RATE} events/s, ${FANOUT_POINT_S} s...`);
      const point = await runPoint({ label: `fanout-${fanOut}`, targets: [fanTeam], fanOut, rate: FANOUT_RATE, seconds: FANOUT_POINT_S });
      curves.fanout.push({ x: fanOut, ...point });
      say(pointLine(point));
    }

    // 3. Tenants: teams added between points, WEBHOOKS_PER_TEAM webhooks each on the team's receiver.
    const tenants = [];
    for (const teams of TEAMS) {
      const started = performance.now();
      const added = await inTurn(
        Array.from({ length: Math.max(0, teams - tenants.length) }, (_, i) => tenants.length + i + 1),
        SETUP_PARALLEL,
        async (n) => {
          const team = await teamWithProject(system, maker, `Curve tenant ${n}`);
          const receiver = await newReceiver();
          await addWebhooks(
            team,
            Array.from({ length: WEBHOOKS_PER_TEAM }, (_, i) => receiver.ipUrl(`/tenant-${n}-${i + 1}`)),
            { parallel: 1 },
          );
          return team;
        },
      );
      tenants.push(...added);
      if (added.length > 0) say(`tenants: ${added.length} teams with ${WEBHOOKS_PER_TEAM} webhooks each added in ${f((performance.now() - started) / 1000)} s`);
      say(`tenants: ${teams} teams, events spread over them at ${TENANT_RATE} events/s, ${POINT_S} s...`);
      const point = await runPoint({ label: `teams-${teams}`, targets: tenants.slice(0, teams), fanOut: WEBHOOKS_PER_TEAM, rate: TENANT_RATE });
      curves.tenants.push({ x: teams, ...point });
      say(pointLine(point));
    }
  } finally {
    maker.close();
  }

  // Figures.
  const machine = await describeMachine(stack);
  const otherWork = [...curves.rate, ...curves.fanout, ...curves.tenants].map((point) => point.otherCores);
  const load = `other work on the machine ${f(Math.min(...otherWork), 2)} to ${f(Math.max(...otherWork), 2)} cores during the points; 1-minute load average ${f(loadAtStart[0], 2)} at the start`;
  // The columns every table starts with (after the cost tables' x label), in this order.
  const pointHeaders = ['events/s', 'deliveries', 'p50 ms', 'p99 ms', 'CPU ms/delivery (net)', '(gross)', 'CPU ms/event (net)'];
  const pointCells = (point) => [
    f(point.rate, 0),
    int(point.deliveries),
    f(point.p50Ms, 0),
    f(point.p99Ms, 0),
    f(point.netCpuMsPerDelivery, 2),
    f(point.cpuMsPerDelivery, 2),
    f(point.netCpuMsPerEvent, 2),
  ];
  const costRows = (points, xLabel) =>
    points.map((point) => [
      xLabel(point),
      ...pointCells(point),
      Object.entries(point.perProcessMsPerDelivery)
        .map(([name, ms]) => `${name} ${f(ms, 2)}`)
        .join(', '),
      Object.entries(point.postgresMsPerDelivery)
        .filter(([, ms]) => ms >= 0.005)
        .map(([name, ms]) => `${name} ${f(ms, 2)}`)
        .join(', '),
      `${int(point.paths.atOnce)} / ${int(point.paths.claimed)}`,
      f(point.paths.meanWaitMs),
      f(point.otherCores, 2),
    ]);
  const costHeaders = (x) => [
    x,
    ...pointHeaders,
    'net ms/delivery by process',
    'PostgreSQL ms/delivery by service (gross)',
    'attempts at once / claimed',
    'mean wait for a slot (ms)',
    'other work (cores)',
  ];
  const fanLabel = (point) => `${point.fanOut} webhook${point.fanOut === 1 ? '' : 's'}`;
  const teamLabel = (point) => `${int(point.teams)} team${point.teams === 1 ? '' : 's'}`;
  const fanBend = costBend(curves.fanout);
  const teamBend = costBend(curves.tenants);
  const lines = [
    '',
    `Cost curve: commit-to-receipt latency and CPU per delivery (services + PostgreSQL + NATS, net of their idle CPU), open loop, ${POINT_S} s per point (fan-out: ${FANOUT_POINT_S} s)`,
    `machine: ${machine}`,
    load,
    '',
    `Latency against rate (one team, ${RATE_WEBHOOKS} webhooks per event):`,
    markdownTable(
      [...pointHeaders, 'attempts at once / claimed', 'machine busy (cores)', 'other work (cores)'],
      curves.rate.map((point) => [...pointCells(point), `${int(point.paths.atOnce)} / ${int(point.paths.claimed)}`, f(point.machineBusyCores, 2), f(point.otherCores, 2)]),
    ),
    '',
    `Fan-out (one team, each webhook on a receiver of its own, ${FANOUT_RATE} events/s):`,
    markdownTable(costHeaders('fan-out'), costRows(curves.fanout, fanLabel)),
    '',
    `Tenants (${WEBHOOKS_PER_TEAM} webhooks per team on the team's receiver, events spread over the teams, ${TENANT_RATE} events/s):`,
    markdownTable(costHeaders('teams'), costRows(curves.tenants, teamLabel)),
    '',
    describeBend('fan-out', fanBend, fanLabel),
    describeBend('tenants', teamBend, teamLabel),
    `failed issue creates: ${failedCreates}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  if (SVG_DIR) {
    // The machine on two lines (hardware and Node; the servers), then the load: each fits the width.
    const note = [...machine.split(/, (?=PostgreSQL)/), load];
    const cpuPanel = (title, points, xLabel) => ({
      title,
      xLabel,
      yLabel: 'CPU ms per delivery',
      xLog: true,
      xTicks: points.map((point) => point.x),
      series: [
        { name: 'net of idle', points: points.map((point) => [point.x, point.netCpuMsPerDelivery]) },
        { name: 'gross', points: points.map((point) => [point.x, point.cpuMsPerDelivery]), dashed: true },
      ],
    });
    const latencyPanel = (title, points, xLabel) => ({
      title,
      xLabel,
      yLabel: 'commit to receipt, ms',
      xLog: true,
      yLog: true,
      xTicks: points.map((point) => point.x),
      series: [
        { name: 'p50', points: points.map((point) => [point.x, Math.max(1, point.p50Ms)]) },
        { name: 'p99', points: points.map((point) => [point.x, Math.max(1, point.p99Ms)]) },
      ],
    });
    fs.mkdirSync(SVG_DIR, { recursive: true });
    const curvePath = path.join(SVG_DIR, 'performance-curve.svg');
    fs.writeFileSync(
      curvePath,
      chartSvg({
        title: 'bench:curve: cost per delivery as the fan-out and the tenants grow',
        note,
        columns: 2,
        panels: [
          cpuPanel(`Fan-out (${FANOUT_RATE} events/s)`, curves.fanout, 'webhooks per event'),
          cpuPanel(`Tenants (${WEBHOOKS_PER_TEAM} webhooks each, ${TENANT_RATE} events/s)`, curves.tenants, 'teams'),
          latencyPanel('Fan-out: latency', curves.fanout, 'webhooks per event'),
          latencyPanel('Tenants: latency', curves.tenants, 'teams'),
        ],
      }),
    );
    const ratePath = path.join(SVG_DIR, 'performance-rate.svg');
    fs.writeFileSync(
      ratePath,
      chartSvg({
        title: `bench:curve: latency against event rate (${RATE_WEBHOOKS} webhooks per event)`,
        note,
        columns: 2,
        panels: [
          latencyPanel('Commit to receipt', curves.rate, 'issue events per second'),
          {
            title: 'Machine and CPU',
            xLabel: 'issue events per second',
            yLabel: 'cores busy / CPU ms per event',
            xLog: true,
            xTicks: curves.rate.map((point) => point.x),
            series: [
              { name: 'machine cores busy', points: curves.rate.map((point) => [point.x, point.machineBusyCores]) },
              { name: 'CPU ms per event (net)', points: curves.rate.map((point) => [point.x, point.netCpuMsPerEvent]), dashed: true },
            ],
          },
        ],
      }),
    );
    say(`charts written: ${path.relative(process.cwd(), curvePath)}, ${path.relative(process.cwd(), ratePath)}`);
  }

  const round = (value, digits = 2) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : null);
  const json = (points) =>
    points.map((point) => ({
      x: point.x,
      rate_per_s: point.rate,
      deliveries: point.deliveries,
      received: point.received,
      p50_ms: round(point.p50Ms, 1),
      p99_ms: round(point.p99Ms, 1),
      cpu_ms_per_delivery: round(point.netCpuMsPerDelivery),
      gross_cpu_ms_per_delivery: round(point.cpuMsPerDelivery),
      attempts_at_once: point.paths.atOnce,
      attempts_claimed: point.paths.claimed,
      other_cores: round(point.otherCores),
    }));
  process.stdout.write(
    `${JSON.stringify({ bench: 'curve', rate: json(curves.rate), fanout: json(curves.fanout), tenants: json(curves.tenants), fanout_spread: round(fanBend?.spread), tenants_spread: round(teamBend?.spread) })}\n`,
  );
  const missing = [...curves.rate, ...curves.fanout, ...curves.tenants].filter((point) => point.received < point.deliveries);
  if (failedCreates > 0 || missing.length > 0) {
    say(`${failedCreates} issue creates failed, ${missing.length} points missed deliveries: the figures above are not trustworthy`);
    exitCode = 1;
  }
} catch (error) {
  say(`benchmark failed: ${error?.stack ?? error}`);
  exitCode = 1;
} finally {
  await system?.stop().catch((error) => say(`could not stop the services: ${error?.message ?? error}`));
  await Promise.all(receivers.map((receiver) => receiver.close()));
  fs.rmSync(certificate.dir, { recursive: true, force: true });
  await stack.stop();
}
process.exit(exitCode);
