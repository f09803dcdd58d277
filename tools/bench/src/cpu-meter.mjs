// CPU spent by the system under test over a span of a benchmark: every service, the PostgreSQL
// server (postmaster, its background processes and every backend) and nats-server, apart from
// the benchmark's own process (load generator and receivers) and from the machine's other work,
// which are given beside it.
import { createRequire } from 'node:module';
import os from 'node:os';

import { childrenCpuSeconds, cpuSeconds, infrastructurePids, machineCpuSeconds, reapedChildrenCpuSeconds, totalCpuSeconds } from './process-stats.mjs';

const require = createRequire(import.meta.url);

/** The name under which the benchmark's own process is reported; it is not part of the system's sum. */
export const BENCH_PROCESS = 'load generator + receiver';

/** What PostgreSQL's CPU in a span is put down to when its backend was gone by the end of it. */
export const ENDED_BACKENDS = 'closed connections';

/**
 * PostgreSQL's CPU over a span, whatever its connections did meanwhile: the backends alive at both
 * ends count their difference, those opened during the span all they used, and those that exited
 * (a pool closing an idle connection) what the postmaster reaped from them less what they had used
 * before. `before`/`after`: { postmaster: { own, reaped }, children: Map(pid -> seconds) }.
 * Returns { total, byPid: Map(pid -> seconds), ended: seconds of the backends gone by the end }.
 */
export function postgresSpan(before, after) {
  const byPid = new Map();
  for (const [pid, seconds] of after.children) byPid.set(pid, seconds - (before.children.get(pid) ?? 0));
  let earlier = 0;
  for (const [pid, seconds] of before.children) if (!after.children.has(pid)) earlier += seconds;
  const ended = after.postmaster.reaped - before.postmaster.reaped - earlier;
  const own = after.postmaster.own - before.postmaster.own;
  const total = own + ended + [...byPid.values()].reduce((sum, seconds) => sum + seconds, 0);
  return { total, byPid, ended, own };
}

/** What each PostgreSQL backend is, by pid: its application_name (a service's pool), or its kind (checkpointer…). */
async function postgresNames(databaseUrl) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: databaseUrl, application_name: 'bench-cpu-meter' });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT pid, coalesce(nullif(application_name, ''), backend_type) AS name FROM pg_stat_activity`);
    return new Map(rows.map((row) => [Number(row.pid), String(row.name)]));
  } finally {
    await client.end();
  }
}

/** A service's pools (`issue`, `issue-worker`) under the service's name; PostgreSQL's own processes as `postgres (own work)`. */
const serviceOf = (name, services) => {
  const service = name.replace(/-worker$/, '');
  return services.includes(service) ? service : 'postgres (own work)';
};

/**
 * Starts measuring. `services` names the services of `system` to count; `stackDir` is the bench
 * stack's directory (its PostgreSQL and NATS). With `databaseUrl`, PostgreSQL's CPU is also split
 * by the service whose connection used it (application_name). Resolves to a meter whose `stop()`
 * resolves to:
 *   seconds: wall-clock length of the span;
 *   cpuSeconds: { <service>…, postgres, nats, [BENCH_PROCESS] } CPU seconds used in the span;
 *   systemCpuSeconds: the sum over services, PostgreSQL and NATS (the benchmark's process apart);
 *   postgresBy: { <service>…, 'postgres (own work)', [ENDED_BACKENDS] } seconds (with databaseUrl);
 *   machineBusyCores: cores the whole machine kept busy on average;
 *   otherCores: of them, cores used by processes outside the benchmark and the system.
 */
export async function startCpuMeter({ system, services, stackDir, databaseUrl }) {
  const infrastructure = infrastructurePids(stackDir);
  const postmaster = infrastructure.postgres[0];
  const readPostgres = () => ({
    postmaster: { own: cpuSeconds(postmaster), reaped: reapedChildrenCpuSeconds(postmaster) },
    children: childrenCpuSeconds(postmaster),
  });
  const readServices = () => ({
    ...Object.fromEntries(services.map((name) => [name, cpuSeconds(system.services[name].pid)])),
    nats: totalCpuSeconds(infrastructure.nats),
  });
  const namesBefore = databaseUrl ? await postgresNames(databaseUrl) : new Map();
  const postgresBefore = readPostgres();
  const before = readServices();
  const benchBefore = process.cpuUsage();
  const machineBefore = machineCpuSeconds();
  const startedAt = performance.now();
  return {
    async stop() {
      const postgresAfter = readPostgres();
      const after = readServices();
      const bench = process.cpuUsage(benchBefore);
      const machineAfter = machineCpuSeconds();
      const seconds = (performance.now() - startedAt) / 1000;
      const postgres = postgresSpan(postgresBefore, postgresAfter);
      const used = Object.fromEntries(Object.keys(before).map((name) => [name, after[name] - before[name]]));
      used.postgres = postgres.total;
      const systemCpuSeconds = Object.values(used).reduce((sum, value) => sum + value, 0);
      used[BENCH_PROCESS] = (bench.user + bench.system) / 1e6;
      let postgresBy;
      if (databaseUrl) {
        const names = new Map([...namesBefore, ...(await postgresNames(databaseUrl))]);
        postgresBy = { 'postgres (own work)': postgres.own, [ENDED_BACKENDS]: postgres.ended };
        for (const [pid, spent] of postgres.byPid) {
          const name = names.has(pid) ? serviceOf(names.get(pid), services) : 'postgres (own work)';
          postgresBy[name] = (postgresBy[name] ?? 0) + spent;
        }
      }
      const cores = os.cpus().length;
      const busy = machineAfter.busy - machineBefore.busy;
      const machineBusyCores = busy / ((machineAfter.total - machineBefore.total) / cores);
      const otherCores = Math.max(0, busy - systemCpuSeconds - used[BENCH_PROCESS]) / seconds;
      return { seconds, cpuSeconds: used, systemCpuSeconds, postgresBy, machineBusyCores, otherCores };
    },
  };
}
