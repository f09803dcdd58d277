// CPU spent by the system under test over a span of a benchmark: every service, the PostgreSQL
// server (postmaster and backends) and nats-server, apart from the benchmark's own process (load
// generator and receivers) and from the machine's other work, which are given beside it.
import os from 'node:os';

import { cpuSeconds, infrastructurePids, machineCpuSeconds, totalCpuSeconds } from './process-stats.mjs';

/** The name under which the benchmark's own process is reported; it is not part of the system's sum. */
export const BENCH_PROCESS = 'load generator + receiver';

/**
 * Starts measuring. `services` names the services of `system` to count; `stackDir` is the bench
 * stack's directory (its PostgreSQL and NATS). PostgreSQL backends are those alive now: take the
 * meter once the services' pools are open. `stop()` returns:
 *   seconds: wall-clock length of the span;
 *   cpuSeconds: { <service>…, postgres, nats, [BENCH_PROCESS] } CPU seconds used in the span;
 *   systemCpuSeconds: the sum over services, PostgreSQL and NATS (the benchmark's process apart);
 *   machineBusyCores: cores the whole machine kept busy on average;
 *   otherCores: of them, cores used by processes outside the benchmark and the system.
 */
export function startCpuMeter({ system, services, stackDir }) {
  const infrastructure = infrastructurePids(stackDir);
  const read = () => ({
    ...Object.fromEntries(services.map((name) => [name, cpuSeconds(system.services[name].pid)])),
    postgres: totalCpuSeconds(infrastructure.postgres),
    nats: totalCpuSeconds(infrastructure.nats),
  });
  const before = read();
  const benchBefore = process.cpuUsage();
  const machineBefore = machineCpuSeconds();
  const startedAt = performance.now();
  return {
    stop() {
      const after = read();
      const bench = process.cpuUsage(benchBefore);
      const machineAfter = machineCpuSeconds();
      const seconds = (performance.now() - startedAt) / 1000;
      const used = Object.fromEntries(Object.keys(before).map((name) => [name, after[name] - before[name]]));
      const systemCpuSeconds = Object.values(used).reduce((sum, value) => sum + value, 0);
      used[BENCH_PROCESS] = (bench.user + bench.system) / 1e6;
      const cores = os.cpus().length;
      const busy = machineAfter.busy - machineBefore.busy;
      const machineBusyCores = busy / ((machineAfter.total - machineBefore.total) / cores);
      const otherCores = Math.max(0, busy - systemCpuSeconds - used[BENCH_PROCESS]) / seconds;
      return { seconds, cpuSeconds: used, systemCpuSeconds, machineBusyCores, otherCores };
    },
  };
}
