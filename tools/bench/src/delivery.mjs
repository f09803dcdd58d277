#!/usr/bin/env node
// `npm run bench:delivery`: how fast an issue change reaches a webhook receiver. Starts PostgreSQL
// and NATS (tools/dev), every service but the console, a local HTTPS receiver with a self-signed
// certificate (trusted by the delivery service through NODE_EXTRA_CA_CERTS) and a team with two
// webhooks pointing at it, then:
//   1. latency: creates issues through the gateway at a fixed rate (open loop, 200/s) and measures,
//      for every delivery, the time from the event's commit (its created_at) to its receipt;
//   2. saturation: stops the delivery service, creates a backlog of issues, starts it again and
//      measures the sustained deliveries/s while it drains the backlog.
//   3. baseline: a bare loop of signed undici POSTs (bare-loop.mjs, in a worker thread) against a
//      receiver of the same kind, as fast as it goes: what the pipeline's saturation is compared with;
//   4. retention: moves every finished delivery past the retention window and times the delivery
//      service's retention loop removing them, against the rows written per second at saturation.
// PostgreSQL runs with its production settings (fsync and synchronous commit on) unless
// BENCH_FAST_DB=1. Prints the machine, p50/p99 latency from commit and from each request's due time
// (no coordinated omission: the load is open loop and late requests count from when they were due),
// where that time goes, stage by stage (delivery-stages.mjs: outbox row, bus, delivery row, attempt, receipt),
// deliveries/s against the bare loop, CPU per event summed over every process of the system
// (services, PostgreSQL, NATS; the load generator and receiver apart), every service's peak RSS
// and the delivery log's rows written and removed per second, against the targets below; it ends
// with one JSON line:
//   {"bench":"delivery","p50_ms":…,"p99_ms":…,"rate_per_s":200,"saturation_per_s":…,"bare_loop_per_s":…,"cpu_ms_per_event":…,"max_rss_mb":…}
//
//   BENCH_RATE=200 BENCH_DURATION_S=20 BENCH_WARMUP_S=3 BENCH_BACKLOG=2500 npm run bench:delivery
//   BENCH_BARE_LOOP_S=5 BENCH_BARE_LOOP_CONCURRENCY=64 BENCH_FAST_DB=1
import fs from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import { Worker } from 'node:worker_threads';

import { useProjectNode } from '../../dev/src/provision/index.mjs';
import { startStack } from '../../dev/src/stack.mjs';
import { say, turboBuild } from '../../dev/src/util.mjs';
import { startBenchSystem } from './bench-system.mjs';
import { BENCH_BUILD_FILTERS } from './build.mjs';
import { startCpuMeter } from './cpu-meter.mjs';
import { formatStages, measureStages, watchBus } from './delivery-stages.mjs';
import { describeMachine } from './machine.mjs';
import { peakRssMb } from './process-stats.mjs';
import { makeCertificate, startReceiver } from './receiver.mjs';
import { measureRetention } from './retention.mjs';
import { openLoop, percentile, waitUntil } from './stats.mjs';

await useProjectNode();

const require = createRequire(import.meta.url);

const RATE = Number(process.env.BENCH_RATE || 200);
const DURATION_S = Number(process.env.BENCH_DURATION_S || 20);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S || 3);
const BACKLOG = Number(process.env.BENCH_BACKLOG || 2500);
const BARE_LOOP_S = Number(process.env.BENCH_BARE_LOOP_S || 5);
const BARE_LOOP_CONCURRENCY = Number(process.env.BENCH_BARE_LOOP_CONCURRENCY || 64);
const FAST_DB = process.env.BENCH_FAST_DB === '1';
const WEBHOOKS = 2;
const TARGETS = { p50Ms: 2, p99Ms: 10, saturationOfBareLoop: 0.35, cpuMsPerEvent: 4, rssMb: 120 };

if (process.env.WORKLANE_SKIP_BUILD !== '1') {
  say('building the services, the CLI and the test helpers (turbo, cached)...');
  const code = await turboBuild(BENCH_BUILD_FILTERS);
  if (code !== 0) process.exit(code);
}

// Loaded after the build: these are compiled packages.
const { API_STACK, api, bootstrapTeam } = require('@worklane/testing');

const stack = await startStack({ name: 'bench-delivery', fast: FAST_DB, fresh: true });
process.env.DATABASE_URL = stack.databaseUrl;
const certificate = makeCertificate();
// Issue n of the latency run was due at dueAt.get(n); its deliveries count from then, too.
const dueAt = new Map();
const fromDue = [];
const receiver = await startReceiver(certificate, {
  onDelivery(body, receivedAt) {
    const n = Number(/^Bench issue (\d+)$/.exec(body.issue?.title ?? '')?.[1]);
    if (dueAt.has(n)) fromDue.push(receivedAt - dueAt.get(n));
  },
});

/** The bare signed-POST loop against a receiver of its own (same code, same certificate). */
async function bareLoop() {
  const baseline = await startReceiver(certificate, { reports: false });
  try {
    const worker = new Worker(new URL('./bare-loop.mjs', import.meta.url), {
      workerData: { url: baseline.url('/bare'), ca: certificate.cert.toString(), concurrency: BARE_LOOP_CONCURRENCY, seconds: BARE_LOOP_S },
    });
    const result = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    return { ...result, perSecond: result.requests / result.seconds };
  } finally {
    await baseline.close();
  }
}

let system;
let bus;
let exitCode = 0;
try {
  say('starting the token, project, webhook, issue, delivery and gateway services...');
  // One team fills the saturation backlog: its fan-out budget and the gateway's rate limits run
  // with their limits out of the way (bench-system.mjs).
  system = await startBenchSystem({ stack, certificate });
  const team = await bootstrapTeam(system);
  const client = api(system, team.token);
  const project = await client.post(`/teams/${team.team_id}/organizations/${team.organization_id}/projects`, { name: 'Bench' });
  if (project.status !== 201) throw new Error(`project: ${project.status} ${project.text}`);
  for (let i = 1; i <= WEBHOOKS; i++) {
    const webhook = await client.post(`/teams/${team.team_id}/webhooks`, {
      url: receiver.url(`/hook-${i}`),
      events: ['issue.created', 'issue.updated'],
      secret: `bench-signing-secret-${i}`,
    });
    if (webhook.status !== 201) throw new Error(`webhook: ${webhook.status} ${webhook.text}`);
  }
  const issuesUrl = new URL(`${system.gatewayUrl}/api/v1/teams/${team.team_id}/organizations/${team.organization_id}/projects/${project.body.id}/issues`);
  // Plain node:http with keep-alive: the load generator should cost the machine as little as it can.
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  let created = 0;
  let sent = 0;
  let failed = 0;
  const post = (body) =>
    new Promise((resolve, reject) => {
      const req = httpRequest(issuesUrl, {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${team.token}`, accept: 'application/json', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  let recordDue = false;
  const createIssue = async (i, intendedAt) => {
    const n = ++sent;
    if (recordDue) dueAt.set(n, intendedAt);
    try {
      const response = await post(JSON.stringify({ title: `Bench issue ${n}`, priority: 'medium' }));
      if (response.status === 201) created += 1;
      else if (++failed <= 3) say(`issue create answered ${response.status}: ${response.text.slice(0, 200)}`);
    } catch (error) {
      if (++failed <= 3) say(`issue create failed: ${error?.message ?? error}`);
    }
  };

  /** Open loop: issues are sent on schedule whether or not earlier ones have been answered. */
  const createAtRate = (rate, seconds) => openLoop(rate, seconds, createIssue);

  // 1. Latency at a fixed rate.
  if (WARMUP_S > 0) {
    say(`warm-up: ${RATE} issues/s for ${WARMUP_S} s...`);
    await createAtRate(RATE, WARMUP_S);
    const expected = created * WEBHOOKS;
    await waitUntil(
      () => receiver.firstReceipt.size >= expected,
      60_000,
      'the warm-up deliveries',
      () => `(${receiver.firstReceipt.size} of ${expected})`,
    );
  }
  const before = new Set(receiver.firstReceipt.keys());
  const createdBefore = created;
  // When each event reaches the bus, for the stage breakdown (delivery-stages.mjs).
  bus = await watchBus(stack.natsUrl);
  const meter = await startCpuMeter({ system, services: [...API_STACK], stackDir: stack.dir });
  say(`latency: ${RATE} issues/s through the gateway for ${DURATION_S} s, ${WEBHOOKS} webhooks each...`);
  recordDue = true;
  await createAtRate(RATE, DURATION_S);
  recordDue = false;
  const measuredEvents = created - createdBefore;
  await waitUntil(
    () => receiver.firstReceipt.size >= created * WEBHOOKS,
    120_000,
    'every delivery of the latency run',
    () => `(${receiver.firstReceipt.size} of ${created * WEBHOOKS}; ${failed} creates failed)`,
  );
  const cpu = await meter.stop();
  await bus.close();
  const measured = new Map([...receiver.firstReceipt.entries()].filter(([id]) => !before.has(id)));
  const stages = await measureStages({ issueDb: system.serviceEnv.issue, deliveryDb: system.serviceEnv.delivery, receipts: measured, seenOnBus: bus.seen });
  const latencies = [...measured.entries()].map(([, receipt]) => receipt.receivedAt - receipt.createdAt).sort((a, b) => a - b);
  const cpuPerEventMs = Object.fromEntries(Object.entries(cpu.cpuSeconds).map(([name, seconds]) => [name, (seconds * 1000) / measuredEvents]));
  const deliveryPid = system.services.delivery.pid;
  let deliveryRss = peakRssMb(deliveryPid);

  // 2. Throughput at saturation: a backlog drained as fast as the delivery service can.
  say(`saturation: stopping the delivery service and queueing ${BACKLOG} issues (${BACKLOG * WEBHOOKS} deliveries)...`);
  await system.services.delivery.stop();
  const sentBefore = sent;
  const workers = Array.from({ length: 16 }, async () => {
    while (sent - sentBefore < BACKLOG) await createIssue();
  });
  await Promise.all(workers);
  const backlogTotal = created * WEBHOOKS;
  const metricsUrl = `${system.services.issue.metricsUrl}/metrics`;
  const outboxBacklog = async () => Number(/^worklane_outbox_backlog(?:\{[^}]*\})? (\d+)$/m.exec(await (await fetch(metricsUrl)).text())?.[1] ?? NaN);
  await waitUntil(async () => (await outboxBacklog()) === 0, 120_000, 'the outbox to be published');
  const drainedBefore = receiver.firstReceipt.size;
  say('starting the delivery service again and measuring the drain...');
  await system.services.delivery.restart();
  await waitUntil(() => receiver.firstReceipt.size >= backlogTotal, 300_000, 'the backlog to drain');
  const drained = [...receiver.firstReceipt.values()]
    .slice(drainedBefore)
    .map((receipt) => receipt.receivedAt)
    .sort((a, b) => a - b);
  const drainSeconds = (drained[drained.length - 1] - drained[0]) / 1000;
  const deliveriesPerSecond = (drained.length - 1) / drainSeconds;
  deliveryRss = Math.max(deliveryRss, peakRssMb(system.services.delivery.pid));
  const issueRss = peakRssMb(system.services.issue.pid);
  const otherRss = Object.fromEntries(['gateway', 'token', 'project', 'webhook'].map((name) => [name, peakRssMb(system.services[name].pid)]));
  if (system.services.delivery.pid === deliveryPid) say('note: the delivery service pid did not change across the restart');
  const rssMb = { ...otherRss, issue: issueRss, delivery: deliveryRss };
  const maxRssMb = Math.max(...Object.values(rssMb));

  // 3. The baseline: signed POSTs to the same kind of receiver in a bare loop.
  say(`baseline: a bare loop of signed POSTs, ${BARE_LOOP_CONCURRENCY} at a time for ${BARE_LOOP_S} s...`);
  const bare = await bareLoop();

  // 4. Retention: every finished delivery moved past the window, then removed by the retention loop.
  say('retention: moving every finished delivery past the retention window and removing them...');
  const retention = await measureRetention({ databaseUrl: system.serviceEnv.delivery.DATABASE_URL, schema: system.serviceEnv.delivery.DATABASE_SCHEMA, deliveriesPerSecond });

  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  fromDue.sort((a, b) => a - b);
  // Every process of the system; the load generator and the receivers are the benchmark's own.
  const cpuMsPerEvent = (cpu.systemCpuSeconds * 1000) / measuredEvents;
  const saturationOfBare = deliveriesPerSecond / bare.perSecond;
  const f = (value, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
  const pass = (ok) => (ok ? 'ok' : 'MISSED');
  const lines = [
    '',
    `Delivery benchmark: ${WEBHOOKS} webhooks on a local HTTPS receiver, signed deliveries`,
    `machine: ${await describeMachine(stack)}`,
    '',
    `latency at ${RATE} issue events/s for ${DURATION_S} s, open loop (${measuredEvents} events, ${latencies.length} deliveries), event commit to receipt:`,
    `  p50 ${f(p50)} ms (target <= ${TARGETS.p50Ms} ms: ${pass(p50 <= TARGETS.p50Ms)})   p99 ${f(p99)} ms (target <= ${TARGETS.p99Ms} ms: ${pass(p99 <= TARGETS.p99Ms)})   max ${f(latencies[latencies.length - 1])} ms`,
    `  from each create's due time (API answer included, no coordinated omission): p50 ${f(percentile(fromDue, 50))} ms   p99 ${f(percentile(fromDue, 99))} ms   max ${f(fromDue[fromDue.length - 1])} ms`,
    ...formatStages(stages),
    `saturation: ${drained.length} queued deliveries drained in ${f(drainSeconds, 2)} s: ${f(deliveriesPerSecond, 0)} deliveries/s`,
    `bare loop of signed POSTs to the same kind of receiver (${BARE_LOOP_CONCURRENCY} at a time, ${f(bare.seconds, 1)} s, ${bare.failures} failed): ${f(bare.perSecond, 0)} requests/s; saturation / bare loop ${f(saturationOfBare, 2)} (target >= ${TARGETS.saturationOfBareLoop}: ${pass(saturationOfBare >= TARGETS.saturationOfBareLoop)})`,
    `retention: ${retention.removed.deliveries} deliveries + ${retention.removed.attempts} attempts removed in ${f(retention.seconds, 2)} s (batches of ${retention.batchSize}): ${f(retention.rowsRemovedPerSecond, 0)} rows removed/s; rows written/s at saturation (deliveries + attempts): ${f(retention.rowsWrittenPerSecond, 0)} (removed >= written: ${pass(retention.rowsRemovedPerSecond >= retention.rowsWrittenPerSecond)})`,
    `peak RSS (VmHWM): ${Object.entries(rssMb)
      .map(([name, mb]) => `${name} ${f(mb)} MB`)
      .join(', ')} (target: every service <= ${TARGETS.rssMb} MB: ${pass(maxRssMb <= TARGETS.rssMb)})`,
    `CPU per issue event during the latency run: ${Object.entries(cpuPerEventMs)
      .map(([name, ms]) => `${name} ${f(ms, 2)} ms`)
      .join(', ')}`,
    `  summed over the system (services, PostgreSQL, NATS): ${f(cpuMsPerEvent, 2)} ms (target <= ${TARGETS.cpuMsPerEvent} ms: ${pass(cpuMsPerEvent <= TARGETS.cpuMsPerEvent)})`,
    `machine CPU during the latency run: ${f(cpu.machineBusyCores, 2)} of ${os.cpus().length} cores busy, ${f(cpu.otherCores, 2)} cores of it by processes outside this benchmark`,
    `receiver requests: ${receiver.requests} for ${receiver.firstReceipt.size} distinct deliveries; failed issue creates: ${failed}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const round = (value, digits = 1) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : null);
  process.stdout.write(
    `${JSON.stringify({ bench: 'delivery', p50_ms: round(p50), p99_ms: round(p99), rate_per_s: RATE, saturation_per_s: round(deliveriesPerSecond, 0), bare_loop_per_s: round(bare.perSecond, 0), cpu_ms_per_event: round(cpuMsPerEvent, 2), max_rss_mb: round(maxRssMb) })}\n`,
  );
  if (failed > 0) {
    for (const name of ['gateway', 'issue']) {
      const errors = system.services[name]
        .logs()
        .split('\n')
        .filter((line) => /"level":"(error|fatal)"/.test(line));
      for (const line of errors.slice(0, 3)) say(`${name}: ${line.slice(0, 600)}`);
    }
    say('some issue creates failed: the figures above are not trustworthy');
    exitCode = 1;
  }
} catch (error) {
  say(`benchmark failed: ${error?.stack ?? error}`);
  exitCode = 1;
} finally {
  await bus?.close().catch(() => {});
  await system?.stop().catch((error) => say(`could not stop the services: ${error?.message ?? error}`));
  await receiver.close();
  fs.rmSync(certificate.dir, { recursive: true, force: true });
  await stack.stop();
}
process.exit(exitCode);
