#!/usr/bin/env node
// `npm run bench:gateway`: what the gateway costs. Starts PostgreSQL (tools/dev), the token, project
// and gateway services, bootstraps a team, then drives authenticated GET list-projects and POST
// create-project with autocannon, first straight at the project service (with an identity signed
// as the gateway signs it) and then through the gateway, at the same concurrency and duration.
// Prints requests/s, p50 and p99 for both, their ratio, the p50 the gateway adds and each
// service's peak RSS, against the targets: gateway >= 50% of direct throughput, <= +1 ms p50,
// every service <= 150 MB.
//
// Two phases: at saturation (as fast as the connections go: throughput, and latency under full
// load), then at a fixed rate well below saturation (the latency the gateway adds to a request,
// without queueing behind other requests).
//
// V8 sizes its heap from the memory it sees: on a large machine it lets the young generation
// alone grow past 100 MB before collecting. The services run here with heap limits that fit the
// chart's 256 MiB memory limit (in such a container V8 picks limits at least this tight by
// itself): BENCH_NODE_OPTIONS, default below; BENCH_NODE_OPTIONS= (empty) keeps the machine's.
//
//   BENCH_DURATION_S=10 BENCH_CONNECTIONS=10 BENCH_WARMUP_S=2 BENCH_RATE=200 BENCH_SEED_PROJECTS=20 npm run bench:gateway
//   BENCH_JSON=1 ... also prints the figures as one JSON line at the end.
import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';

import autocannon from 'autocannon';

import { startStack } from '../../dev/src/stack.mjs';
import { SERVICE_NODE_OPTIONS, peakRssMb as peakRssOf } from './process-stats.mjs';
import { useProjectNode } from '../../dev/src/provision/index.mjs';
import { say, turboBuild } from '../../dev/src/util.mjs';

await useProjectNode();

const require = createRequire(import.meta.url);

const DURATION_S = Number(process.env.BENCH_DURATION_S || 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S || 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 10);
const SEED_PROJECTS = Number(process.env.BENCH_SEED_PROJECTS || 20);
const RATE = Number(process.env.BENCH_RATE || 200);
const NODE_OPTIONS = SERVICE_NODE_OPTIONS;
const TARGETS = { throughputRatio: 0.5, addedP50Ms: 1, rssMb: 150 };

if (process.env.WORKLANE_SKIP_BUILD !== '1') {
  say('building the gateway, token and project services and the CLI (turbo, cached)...');
  const code = await turboBuild(['--filter=@worklane/gateway...', '--filter=@worklane/token...', '--filter=@worklane/project...', '--filter=@worklane/cli...', '--filter=@worklane/testing...']);
  if (code !== 0) process.exit(code);
}

// Loaded after the build: these are compiled packages.
const { api, bootstrapTeam, signerOf, startSystem } = require('@worklane/testing');
const { signIdentity } = require('@worklane/http');

const stack = await startStack({ name: 'bench', fast: true });
process.env.DATABASE_URL = stack.databaseUrl;

let system;
let exitCode = 0;
try {
  say('starting the token, project and gateway services...');
  system = await startSystem({
    services: ['token', 'project', 'gateway'],
    env: { LOG_LEVEL: 'warn', NODE_OPTIONS },
    serviceEnv: {
      // The limiter still runs on every request; its limit is out of the way.
      gateway: {
        RATE_LIMIT_PER_SECOND: '1000000',
        RATE_LIMIT_BURST: '1000000',
        WEBHOOK_SERVICE_URL: '',
        ISSUE_SERVICE_URL: '',
        DELIVERY_SERVICE_URL: '',
        CONSOLE_SERVICE_URL: '',
      },
    },
  });
  const team = await bootstrapTeam(system);
  const client = api(system, team.token);
  const teamPath = `/api/v1/teams/${team.team_id}`;
  const listPath = `${teamPath}/organizations/${team.organization_id}/projects`;
  for (let i = 1; i <= SEED_PROJECTS; i++) {
    const created = await client.post(listPath.slice('/api/v1'.length), { name: `Seed project ${i}`, description: 'A project to list', github_repository: 'worklane/bench' });
    if (created.status !== 201) throw new Error(`seeding failed: ${created.status} ${created.text}`);
  }
  // Each create run writes into its own, empty organization, so both start from the same state.
  const organization = async (name) => {
    const created = await client.post(`/teams/${team.team_id}/organizations`, { name });
    if (created.status !== 201) throw new Error(`organization failed: ${created.status} ${created.text}`);
    return `${teamPath}/organizations/${created.body.id}/projects`;
  };
  const createPaths = { direct: await organization('Bench direct'), gateway: await organization('Bench gateway') };

  const identity = { teamId: team.team_id, userId: team.user_id, tokenId: team.token_id };
  // The gateway's own private key, as only the gateway (and this benchmark's direct target) holds it.
  const key = signerOf(system.keys.signing, 'gateway');
  const targets = {
    // Signed per request, as the gateway does, so the identity is always fresh.
    direct: { url: system.urls.project, headers: (method, path) => signIdentity(key, method, path, identity) },
    gateway: { url: system.gatewayUrl, headers: () => ({ authorization: `Bearer ${team.token}` }) },
  };

  let counter = 0;
  const scenarios = {
    list: (target) => ({
      method: 'GET',
      path: listPath,
      setupRequest: (request) => ({ ...request, headers: { ...request.headers, accept: 'application/json', ...targets[target].headers('GET', listPath) } }),
    }),
    create: (target) => ({
      method: 'POST',
      path: createPaths[target],
      setupRequest: (request) => ({
        ...request,
        headers: { ...request.headers, accept: 'application/json', 'content-type': 'application/json', ...targets[target].headers('POST', createPaths[target]) },
        body: JSON.stringify({ name: `Bench ${target} ${++counter}`, description: 'Created by the benchmark' }),
      }),
    }),
  };

  const SERVICES = ['gateway', 'token', 'project'];
  /** CPU time (user + system) a process has used, in microseconds. */
  const cpuMicros = (pid) => {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  };

  /** One autocannon run; latencies are collected per response for sub-millisecond percentiles. */
  async function drive(scenario, target, seconds, rate) {
    const cpuBefore = Object.fromEntries(SERVICES.map((name) => [name, cpuMicros(system.services[name].pid)]));
    const latencies = [];
    const options = { url: targets[target].url, connections: CONNECTIONS, duration: seconds, requests: [scenarios[scenario](target)] };
    if (rate) options.overallRate = rate;
    const instance = autocannon(options);
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
    const result = await instance;
    latencies.sort((a, b) => a - b);
    const percentile = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
    const requests = result.requests.total;
    return {
      // CPU each service spent per request during the run: where the gateway path's cost goes.
      cpuMicrosPerRequest: Object.fromEntries(SERVICES.map((name) => [name, (cpuMicros(system.services[name].pid) - cpuBefore[name]) / requests])),
      requestsPerSecond: result.requests.average,
      p50: percentile(50),
      p99: percentile(99),
      ok: latencies.length,
      failed: result.non2xx + result.errors + result.timeouts,
    };
  }

  // Everything shares the machine's cores: other work running meanwhile shows in these figures.
  const loadBefore = os.loadavg()[0];
  const results = {};
  for (const scenario of ['list', 'create']) {
    results[scenario] = {};
    for (const target of ['direct', 'gateway']) {
      say(`${scenario} ${target} at saturation: ${WARMUP_S} s warm-up, ${DURATION_S} s measured, ${CONNECTIONS} connections...`);
      if (WARMUP_S > 0) await drive(scenario, target, WARMUP_S);
      results[scenario][target] = await drive(scenario, target, DURATION_S);
    }
  }
  const atRate = {};
  for (const scenario of ['list', 'create']) {
    atRate[scenario] = {};
    for (const target of ['direct', 'gateway']) {
      say(`${scenario} ${target} at ${RATE} requests/s: ${DURATION_S} s...`);
      atRate[scenario][target] = await drive(scenario, target, DURATION_S, RATE);
    }
  }

  const peakRssMb = {};
  for (const name of ['gateway', 'token', 'project']) peakRssMb[name] = peakRssOf(system.services[name].pid);

  const f = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
  const pass = (ok) => (ok ? 'ok' : 'MISSED');
  const lines = [];
  const row = (label, target, r) =>
    `${label.padEnd(22)} ${target.padEnd(8)} ${f(r.requestsPerSecond, 0).padStart(7)}  ${f(r.p50).padStart(7)}  ${f(r.p99).padStart(7)}  ${String(r.failed).padStart(6)}  ` +
    SERVICES.map((name) => f(r.cpuMicrosPerRequest[name], 0).padStart(name.length + 3)).join('');
  lines.push('');
  const loadAfter = os.loadavg()[0];
  lines.push(`Gateway benchmark: ${CONNECTIONS} connections, ${DURATION_S} s per run, ${SEED_PROJECTS} projects listed, NODE_OPTIONS=${JSON.stringify(NODE_OPTIONS)}`);
  lines.push(`${os.cpus().length} CPUs; 1-minute load average ${f(loadBefore)} before, ${f(loadAfter)} after`);
  lines.push('');
  lines.push(`${''.padEnd(66)}CPU µs per request`);
  lines.push(`${'run'.padEnd(22)} ${'path'.padEnd(8)} ${'req/s'.padStart(7)}  ${'p50 ms'.padStart(7)}  ${'p99 ms'.padStart(7)}  ${'failed'.padStart(6)}  ${SERVICES.map((name) => name.padStart(name.length + 3)).join('')}`);
  for (const scenario of ['list', 'create']) {
    for (const target of ['direct', 'gateway']) lines.push(row(`${scenario} (saturation)`, target, results[scenario][target]));
  }
  for (const scenario of ['list', 'create']) {
    for (const target of ['direct', 'gateway']) lines.push(row(`${scenario} (${RATE}/s)`, target, atRate[scenario][target]));
  }
  lines.push('');
  const summary = {};
  for (const scenario of ['list', 'create']) {
    const { direct, gateway } = results[scenario];
    const ratio = gateway.requestsPerSecond / direct.requestsPerSecond;
    const added = atRate[scenario].gateway.p50 - atRate[scenario].direct.p50;
    const addedAtSaturation = gateway.p50 - direct.p50;
    summary[scenario] = { ratio, addedP50Ms: added, addedP50AtSaturationMs: addedAtSaturation };
    lines.push(
      `${scenario.padEnd(7)} throughput through the gateway ${f(ratio * 100, 1)}% of direct (target >= ${TARGETS.throughputRatio * 100}%: ${pass(ratio >= TARGETS.throughputRatio)}); ` +
        `p50 added ${f(added)} ms at ${RATE}/s (target <= ${TARGETS.addedP50Ms} ms: ${pass(added <= TARGETS.addedP50Ms)}), ${f(addedAtSaturation)} ms at saturation`,
    );
    for (const r of [direct, gateway, atRate[scenario].direct, atRate[scenario].gateway]) if (r.failed > 0) exitCode = 1;
  }
  lines.push('');
  lines.push(
    `peak RSS (VmHWM): ${Object.entries(peakRssMb)
      .map(([name, mb]) => `${name} ${f(mb, 1)} MB`)
      .join(', ')} (target <= ${TARGETS.rssMb} MB each: ${pass(Object.values(peakRssMb).every((mb) => mb <= TARGETS.rssMb))})`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
  if (process.env.BENCH_JSON === '1') process.stdout.write(`${JSON.stringify({ cpus: os.cpus().length, loadBefore, loadAfter, connections: CONNECTIONS, durationSeconds: DURATION_S, rate: RATE, nodeOptions: NODE_OPTIONS, results, atRate, summary, peakRssMb })}\n`);
  if (exitCode !== 0) say('some requests failed: the figures above are not trustworthy');
} catch (error) {
  say(`benchmark failed: ${error?.stack ?? error}`);
  exitCode = 1;
} finally {
  await system?.stop().catch((error) => say(`could not stop the services: ${error?.message ?? error}`));
  await stack.stop();
}
process.exit(exitCode);
