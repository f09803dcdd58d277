#!/usr/bin/env node
// `npm run bench:gateway`: what the gateway costs. Starts PostgreSQL (tools/dev), the token, project
// and gateway services, bootstraps a team, then drives authenticated GET list-projects and POST
// create-project with autocannon, first straight at the project service (with an identity signed
// as the gateway signs it) and then through the gateway, at the same concurrency and duration.
// Requests are spread over BENCH_TOKENS (1,000) distinct tokens, so the gateway's
// authentication cache works as it does for real traffic, not for one hot token. PostgreSQL runs
// with its production settings (fsync and synchronous commit on) unless BENCH_FAST_DB=1.
//
// Two phases: at saturation (autocannon, as fast as the connections go: throughput, and latency
// under full load), then open loop at a fixed rate well below saturation: each request leaves at
// its due time whether or not earlier ones were answered, and its latency counts from that due
// time (no coordinated omission). The gateway's added latency is its p50 and p99 at that rate minus
// direct's. A create counts the team's projects under its quota lock, so it costs more as the
// team grows: every create run starts from the same projects (those of earlier runs deleted, the
// table vacuumed), and at saturation the gateway makes as many creates as direct made in its run,
// so both pass through the same states and the ratio is one of times. Prints the machine, requests/s, p50 and p99 for both, their ratio, the added latency
// and each service's peak RSS, against the targets: added p50 <= 0.5 ms and p99 <= 2 ms, at
// saturation >= 80% of direct for list and >= 90% for create. It ends with one JSON line:
//   {"bench":"gateway","added_p50_ms":…,"added_p99_ms":…,"list_ratio":…,"create_ratio":…}
//
// V8 sizes its heap from the memory it sees: on a large machine it lets the young generation
// alone grow past 100 MB before collecting. The services run here with heap limits that fit the
// chart's 256 MiB memory limit (in such a container V8 picks limits at least this tight by
// itself): BENCH_NODE_OPTIONS, default below; BENCH_NODE_OPTIONS= (empty) keeps the machine's.
//
//   BENCH_DURATION_S=10 BENCH_CONNECTIONS=10 BENCH_WARMUP_S=2 BENCH_RATE=200 BENCH_SEED_PROJECTS=20 npm run bench:gateway
//   BENCH_TOKENS=1000 BENCH_FAST_DB=1
import fs from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';

import autocannon from 'autocannon';

import { useProjectNode } from '../../dev/src/provision/index.mjs';
import { startStack } from '../../dev/src/stack.mjs';
import { say, sleep, turboBuild } from '../../dev/src/util.mjs';
import { describeMachine } from './machine.mjs';
import { SERVICE_NODE_OPTIONS, peakRssMb as peakRssOf } from './process-stats.mjs';

await useProjectNode();

const require = createRequire(import.meta.url);

const DURATION_S = Number(process.env.BENCH_DURATION_S || 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S || 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS || 10);
const SEED_PROJECTS = Number(process.env.BENCH_SEED_PROJECTS || 20);
const RATE = Number(process.env.BENCH_RATE || 200);
const TOKENS = Math.max(1, Number(process.env.BENCH_TOKENS || 1000));
const FAST_DB = process.env.BENCH_FAST_DB === '1';
const NODE_OPTIONS = SERVICE_NODE_OPTIONS;
const TARGETS = { ratio: { list: 0.8, create: 0.9 }, addedP50Ms: 0.5, addedP99Ms: 2, rssMb: 150 };

if (process.env.WORKLANE_SKIP_BUILD !== '1') {
  say('building the gateway, token and project services and the CLI (turbo, cached)...');
  const code = await turboBuild([
    '--filter=@worklane/gateway...',
    '--filter=@worklane/token...',
    '--filter=@worklane/project...',
    '--filter=@worklane/cli...',
    '--filter=@worklane/testing...',
  ]);
  if (code !== 0) process.exit(code);
}

const pg = require('pg');

// Loaded after the build: these are compiled packages.
const { createGrpcClient, unaryCall } = require('@worklane/grpc');
const { signIdentity } = require('@worklane/http');
const { loadProto } = require('@worklane/proto');
const { api, bootstrapTeam, cliEnv, signerOf, startSystem } = require('@worklane/testing');

const stack = await startStack({ name: 'bench', fast: FAST_DB, fresh: true });
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
      // Quotas out of the way: the create runs make thousands of projects, the team many tokens.
      token: { TEAM_MAX_API_TOKENS: String(TOKENS + 10) },
      project: { TEAM_MAX_PROJECTS: '1000000' },
      gateway: {
        RATE_LIMIT_PER_SECOND: '1000000',
        RATE_LIMIT_BURST: '1000000',
        RATE_LIMIT_TEAM_PER_SECOND: '1000000',
        RATE_LIMIT_TEAM_BURST: '1000000',
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
  // Each create run writes into its own organization, emptied before every run (see resetCreates).
  const createOrganizations = [];
  const organization = async (name) => {
    const created = await client.post(`/teams/${team.team_id}/organizations`, { name });
    if (created.status !== 201) throw new Error(`organization failed: ${created.status} ${created.text}`);
    createOrganizations.push(Number(created.body.id));
    return `${teamPath}/organizations/${created.body.id}/projects`;
  };
  const createPaths = { direct: await organization('Bench direct'), gateway: await organization('Bench gateway') };

  // A create counts the team's projects under the team's quota lock, so it gets slower as the team
  // grows: thousands of projects made by one run would slow down the next. Every create run starts
  // from the same state: the projects earlier runs made are deleted and the table vacuumed.
  const projectDb = new pg.Client({ connectionString: system.databaseUrl });
  await projectDb.connect();
  const projectSchema = pg.escapeIdentifier(system.serviceEnv.project.DATABASE_SCHEMA);
  async function resetCreates() {
    await projectDb.query(`DELETE FROM ${projectSchema}.projects WHERE organization_id = ANY($1::bigint[])`, [createOrganizations]);
    await projectDb.query(`VACUUM (ANALYZE) ${projectSchema}.projects`);
  }

  // The team's tokens, made over gRPC as the CLI makes them (the CLI's key), a few at a time.
  say(`creating ${TOKENS} tokens...`);
  const env = cliEnv(system);
  const tokenService = createGrpcClient(loadProto('token').worklane.token.v1.TokenService, env.TOKEN_SERVICE_ADDR, { caller: 'cli', signingKey: env.CLI_PRIVATE_KEY });
  const tokens = [{ id: team.token_id, token: team.token }];
  try {
    while (tokens.length < TOKENS) {
      const batch = Array.from({ length: Math.min(20, TOKENS - tokens.length) }, (_, i) =>
        unaryCall(
          (metadata, options, done) => tokenService.CreateToken({ team_id: team.team_id, user_id: team.user_id, name: `bench ${tokens.length + i}` }, metadata, options, done),
          15_000,
        ),
      );
      for (const created of await Promise.all(batch)) tokens.push({ id: Number(created.token.id), token: created.value });
    }
  } finally {
    tokenService.close();
  }
  let turn = 0;
  /** The next token, round robin: every request of a run uses a different one until they wrap. */
  const nextToken = () => tokens[turn++ % tokens.length];

  // The gateway's own private key, as only the gateway (and this benchmark's direct target) holds it.
  const key = signerOf(system.keys.signing, 'gateway');
  const targets = {
    // Signed per request, as the gateway does, so the identity is always fresh.
    direct: { url: system.urls.project, headers: (method, path) => signIdentity(key, method, path, { teamId: team.team_id, userId: team.user_id, tokenId: nextToken().id }) },
    gateway: { url: system.gatewayUrl, headers: () => ({ authorization: `Bearer ${nextToken().token}` }) },
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

  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  /** One request of `scenario` to `target` with node:http; resolves with its status. */
  const sendOne = (scenario, target) =>
    new Promise((resolve) => {
      const spec = scenarios[scenario](target);
      const prepared = spec.setupRequest({ method: spec.method, path: spec.path, headers: {} });
      const body = prepared.body;
      const headers = body ? { ...prepared.headers, 'content-length': Buffer.byteLength(body) } : prepared.headers;
      const req = httpRequest(new URL(spec.path, targets[target].url), { method: spec.method, agent, headers });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
        res.on('error', () => resolve(0));
      });
      req.on('error', () => resolve(0));
      req.end(body);
    });

  /**
   * Open loop at `rate`/s for `seconds`: request i leaves at start + i/rate (checked every
   * millisecond), whatever happened to the others, and its latency counts from then.
   */
  async function openLoopRun(scenario, target, seconds, rate) {
    const cpuBefore = Object.fromEntries(SERVICES.map((name) => [name, cpuMicros(system.services[name].pid)]));
    const latencies = [];
    const pending = [];
    let failed = 0;
    const total = Math.round(rate * seconds);
    const started = performance.now();
    for (let i = 0; i < total;) {
      const now = performance.now();
      for (; i < total && started + (i * 1000) / rate <= now; i++) {
        const due = started + (i * 1000) / rate;
        pending.push(
          sendOne(scenario, target).then((status) => {
            if (status >= 200 && status < 300) latencies.push(performance.now() - due);
            else failed += 1;
          }),
        );
      }
      await sleep(1);
    }
    await Promise.all(pending);
    latencies.sort((a, b) => a - b);
    const percentile = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
    return {
      cpuMicrosPerRequest: Object.fromEntries(SERVICES.map((name) => [name, (cpuMicros(system.services[name].pid) - cpuBefore[name]) / total])),
      requestsPerSecond: total / ((performance.now() - started) / 1000),
      p50: percentile(50),
      p99: percentile(99),
      ok: latencies.length,
      failed,
    };
  }

  /**
   * One autocannon run at saturation, for `length.seconds` or for `length.amount` requests;
   * latencies are collected per response for sub-millisecond percentiles. Throughput is the
   * requests answered over the run's elapsed time, the same way for either length.
   */
  async function drive(scenario, target, length) {
    const cpuBefore = Object.fromEntries(SERVICES.map((name) => [name, cpuMicros(system.services[name].pid)]));
    const latencies = [];
    const options = { url: targets[target].url, connections: CONNECTIONS, requests: [scenarios[scenario](target)] };
    if (length.amount) options.amount = length.amount;
    else options.duration = length.seconds;
    const started = performance.now();
    const instance = autocannon(options);
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
    const result = await instance;
    const elapsedSeconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const percentile = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
    const requests = result.requests.total;
    return {
      // CPU each service spent per request during the run: where the gateway path's cost goes.
      cpuMicrosPerRequest: Object.fromEntries(SERVICES.map((name) => [name, (cpuMicros(system.services[name].pid) - cpuBefore[name]) / requests])),
      requestsPerSecond: latencies.length / elapsedSeconds,
      answered: latencies.length,
      p50: percentile(50),
      p99: percentile(99),
      ok: latencies.length,
      failed: result.non2xx + result.errors + result.timeouts,
    };
  }

  // Everything shares the machine's cores: other work running meanwhile shows in these figures.
  const loadBefore = os.loadavg()[0];
  const results = {};
  // Creates change what the next create costs (the team's project count): each create run starts
  // from the same state, and through the gateway makes as many as direct made in its run, so both
  // go through the same states and the ratio compares the time they took.
  const resetFor = async (scenario) => {
    if (scenario === 'create') await resetCreates();
  };
  for (const scenario of ['list', 'create']) {
    results[scenario] = {};
    for (const target of ['direct', 'gateway']) {
      const length = scenario === 'create' && target === 'gateway' ? { amount: results.create.direct.answered } : { seconds: DURATION_S };
      say(`${scenario} ${target} at saturation: ${WARMUP_S} s warm-up, ${length.amount ? `${length.amount} requests` : `${DURATION_S} s`} measured, ${CONNECTIONS} connections...`);
      if (WARMUP_S > 0) {
        await resetFor(scenario);
        await drive(scenario, target, { seconds: WARMUP_S });
      }
      await resetFor(scenario);
      results[scenario][target] = await drive(scenario, target, length);
    }
  }
  const atRate = {};
  for (const scenario of ['list', 'create']) {
    atRate[scenario] = {};
    for (const target of ['direct', 'gateway']) {
      say(`${scenario} ${target} at ${RATE} requests/s, open loop: ${DURATION_S} s...`);
      if (WARMUP_S > 0) {
        await resetFor(scenario);
        await openLoopRun(scenario, target, WARMUP_S, RATE);
      }
      await resetFor(scenario);
      atRate[scenario][target] = await openLoopRun(scenario, target, DURATION_S, RATE);
    }
  }
  await projectDb.end();

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
  lines.push(
    `Gateway benchmark: ${CONNECTIONS} connections at saturation, ${RATE}/s open loop, ${DURATION_S} s per run, ${tokens.length} tokens, ${SEED_PROJECTS} projects listed, NODE_OPTIONS=${JSON.stringify(NODE_OPTIONS)}`,
  );
  lines.push(`machine: ${await describeMachine(stack)}; 1-minute load average ${f(loadBefore)} before, ${f(loadAfter)} after`);
  lines.push('');
  lines.push(`${''.padEnd(66)}CPU µs per request`);
  lines.push(
    `${'run'.padEnd(22)} ${'path'.padEnd(8)} ${'req/s'.padStart(7)}  ${'p50 ms'.padStart(7)}  ${'p99 ms'.padStart(7)}  ${'failed'.padStart(6)}  ${SERVICES.map((name) => name.padStart(name.length + 3)).join('')}`,
  );
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
    const addedP99 = atRate[scenario].gateway.p99 - atRate[scenario].direct.p99;
    const addedAtSaturation = gateway.p50 - direct.p50;
    summary[scenario] = { ratio, addedP50Ms: added, addedP99Ms: addedP99, addedP50AtSaturationMs: addedAtSaturation };
    lines.push(
      `${scenario.padEnd(7)} throughput through the gateway ${f(ratio * 100, 1)}% of direct (target >= ${TARGETS.ratio[scenario] * 100}%: ${pass(ratio >= TARGETS.ratio[scenario])}); ` +
        `added at ${RATE}/s: p50 ${f(added)} ms (target <= ${TARGETS.addedP50Ms} ms: ${pass(added <= TARGETS.addedP50Ms)}), p99 ${f(addedP99)} ms (target <= ${TARGETS.addedP99Ms} ms: ${pass(addedP99 <= TARGETS.addedP99Ms)}); p50 added at saturation ${f(addedAtSaturation)} ms`,
    );
    for (const r of [direct, gateway, atRate[scenario].direct, atRate[scenario].gateway]) if (r.failed > 0) exitCode = 1;
  }
  lines.push('');
  lines.push(
    `peak RSS (VmHWM): ${Object.entries(peakRssMb)
      .map(([name, mb]) => `${name} ${f(mb, 1)} MB`)
      .join(', ')} (target <= ${TARGETS.rssMb} MB each: ${pass(Object.values(peakRssMb).every((mb) => mb <= TARGETS.rssMb))})`,
  );
  if (exitCode !== 0) lines.push('some requests failed: the figures above are not trustworthy');
  process.stdout.write(`${lines.join('\n')}\n`);
  // The added latency of the two scenarios together: the worse of each.
  const round = (value, digits = 2) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : null);
  process.stdout.write(
    `${JSON.stringify({ bench: 'gateway', added_p50_ms: round(Math.max(summary.list.addedP50Ms, summary.create.addedP50Ms)), added_p99_ms: round(Math.max(summary.list.addedP99Ms, summary.create.addedP99Ms)), list_ratio: round(summary.list.ratio), create_ratio: round(summary.create.ratio) })}\n`,
  );
} catch (error) {
  say(`benchmark failed: ${error?.stack ?? error}`);
  exitCode = 1;
} finally {
  await system?.stop().catch((error) => say(`could not stop the services: ${error?.message ?? error}`));
  await stack.stop();
}
process.exit(exitCode);
