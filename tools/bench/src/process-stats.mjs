// What the benchmarks read off the services they start, and how they start them.
import fs from 'node:fs';

/**
 * V8 heap limits the services run with: the chart's default `env.NODE_OPTIONS`, so the figures
 * describe what ships. BENCH_NODE_OPTIONS overrides; BENCH_NODE_OPTIONS= (empty) keeps V8's own.
 */
export const SERVICE_NODE_OPTIONS = process.env.BENCH_NODE_OPTIONS ?? '--max-old-space-size=128 --max-semi-space-size=4';

/** Peak resident memory of a process so far (VmHWM), in MB. */
export function peakRssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) / 1024;
}
