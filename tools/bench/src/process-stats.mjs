// What the benchmarks read off the services they start, and how they start them.
import fs from 'node:fs';
import path from 'node:path';

/**
 * V8 heap limits the services run with: the chart's default `env.NODE_OPTIONS`, so the figures
 * describe what ships. BENCH_NODE_OPTIONS overrides; BENCH_NODE_OPTIONS= (empty) keeps V8's own.
 * A chart test checks that this and SERVICE_MALLOC_ARENA_MAX match charts/worklane/values.yaml.
 */
export const SERVICE_NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? '--max-old-space-size=128 --max-semi-space-size=1';

/**
 * glibc malloc arenas of every service: the chart's default `env.MALLOC_ARENA_MAX`.
 * BENCH_MALLOC_ARENA_MAX overrides; BENCH_MALLOC_ARENA_MAX= (empty) keeps glibc's own (8 per core).
 * The services the benchmarks start inherit this process's environment, so it is set here, on
 * import, for them (glibc reads it when a process starts: this process itself is not affected).
 */
export const SERVICE_MALLOC_ARENA_MAX = process.env.BENCH_MALLOC_ARENA_MAX ?? '2';
if (SERVICE_MALLOC_ARENA_MAX) process.env.MALLOC_ARENA_MAX = SERVICE_MALLOC_ARENA_MAX;
else delete process.env.MALLOC_ARENA_MAX;

/** Peak resident memory of a process so far (VmHWM), in MB. */
export function peakRssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU seconds (user + system) of the children a process has waited for (they exited): where a
 * PostgreSQL backend's CPU goes once its connection is closed.
 */
export function reapedChildrenCpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** Pids and CPU seconds of the live children of a process. */
export function childrenCpuSeconds(parent) {
  const children = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent) children.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // gone
    }
  }
  return children;
}

/** CPU seconds of several processes together; processes that are gone count nothing. */
export const totalCpuSeconds = (pids) =>
  pids.reduce((sum, pid) => {
    try {
      return sum + cpuSeconds(pid);
    } catch {
      return sum;
    }
  }, 0);

/** Pids of the PostgreSQL server (postmaster and backends) and nats-server of a bench stack. */
export function infrastructurePids(stackDir) {
  const postmaster = Number(fs.readFileSync(path.join(stackDir, 'pg', 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const postgres = [postmaster];
  const nats = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === postmaster) postgres.push(Number(entry));
      else if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`${stackDir}/nats`)) nats.push(Number(entry));
    } catch {
      // gone
    }
  }
  return { postgres, nats };
}

/** Busy and total CPU seconds of the whole machine (every process, the other work on it included). */
export function machineCpuSeconds() {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = fields.map(Number);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  const total = ticks.slice(0, 8).reduce((sum, value) => sum + value, 0);
  return { busy: (total - idle) / 100, total: total / 100 };
}
