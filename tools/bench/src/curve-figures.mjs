// The figures of `npm run bench:curve`: one point's summary, the tables, and where the cost per
// delivery bends and which processes make it bend. Pure functions.
import { BENCH_PROCESS } from './cpu-meter.mjs';
import { percentile } from './stats.mjs';

/** The flatness target: cost per delivery within this factor from the smallest point to the largest. */
export const FLAT_WITHIN = 1.5;

/**
 * Cores each process of the system used on average over an idle span (a `startCpuMeter().stop()`
 * result with no load): its background work, taken off a loaded span's CPU to give the net cost.
 */
export const idleCores = (idle) => Object.fromEntries(Object.entries(idle.cpuSeconds).map(([name, seconds]) => [name, seconds / idle.seconds]));

/**
 * One point of a curve. `latencies`: commit-to-receipt ms of every delivery received (any order);
 * `events`: issue events created; `deliveries`: deliveries expected (events x webhooks per event);
 * `cpu`: the span's `startCpuMeter().stop()`; `idle`: `idleCores()` measured just before it.
 * CPU per delivery is gross (everything the system's processes did in the span) and net (less
 * their idle background over the same time); per-process figures are net, ms per delivery.
 */
export function summarizePoint({ latencies, events, deliveries, cpu, idle = {}, paths }) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const system = Object.keys(cpu.cpuSeconds).filter((name) => name !== BENCH_PROCESS);
  const netSeconds = (name) => Math.max(0, cpu.cpuSeconds[name] - (idle[name] ?? 0) * cpu.seconds);
  const perProcess = Object.fromEntries(system.map((name) => [name, (netSeconds(name) * 1000) / deliveries]));
  const netTotal = system.reduce((sum, name) => sum + netSeconds(name), 0);
  return {
    events,
    deliveries,
    received: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length ? sorted[sorted.length - 1] : NaN,
    cpuMsPerDelivery: (cpu.systemCpuSeconds * 1000) / deliveries,
    netCpuMsPerDelivery: (netTotal * 1000) / deliveries,
    netCpuMsPerEvent: (netTotal * 1000) / events,
    perProcessMsPerDelivery: perProcess,
    // PostgreSQL's CPU by the service whose connections used it (gross: idle not taken off).
    postgresMsPerDelivery: Object.fromEntries(Object.entries(cpu.postgresBy ?? {}).map(([name, seconds]) => [name, (seconds * 1000) / deliveries])),
    paths,
    seconds: cpu.seconds,
    machineBusyCores: cpu.machineBusyCores,
    otherCores: cpu.otherCores,
  };
}

/** Samples of a Prometheus text exposition: Map('name{labels}' -> value), comments left out. */
export function parseMetrics(text) {
  const samples = new Map();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*(?:\{[^}]*\})?) (\S+)/.exec(line);
    if (match) samples.set(match[1], Number(match[2]));
  }
  return samples;
}

/**
 * What the delivery service did between two scrapes of its metrics (parseMetrics): attempts
 * started at once by the fan-out and through a claim, and the mean wait of an attempt from due
 * to started (for a sending slot), in ms.
 */
export function deliveryPaths(before, after) {
  // Every series of `name` whose labels include `label` (other labels, a service's default ones, may be there too).
  const total = (samples, name, label) => {
    let sum = 0;
    for (const [key, value] of samples) {
      const brace = key.indexOf('{');
      if ((brace < 0 ? key : key.slice(0, brace)) === name && (!label || key.includes(label))) sum += value;
    }
    return sum;
  };
  const delta = (name, label) => total(after, name, label) - total(before, name, label);
  const waits = delta('worklane_delivery_schedule_delay_seconds_count');
  return {
    atOnce: delta('worklane_delivery_attempts_started_total', 'path="at_once"'),
    claimed: delta('worklane_delivery_attempts_started_total', 'path="claim"'),
    meanWaitMs: waits > 0 ? (delta('worklane_delivery_schedule_delay_seconds_sum') * 1000) / waits : NaN,
  };
}

/** A Markdown table: `headers` and `rows` of cells (already formatted text). */
export function markdownTable(headers, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * Where the cost per delivery (`key` of each point, net by default) bends along a curve, points
 * in the order of their x: the overall spread (largest over smallest), whether it is within
 * FLAT_WITHIN, the pair of neighbouring points with the largest change (the bend), and the
 * processes whose ms per delivery changed most across that pair, largest change first.
 */
export function costBend(points, key = 'netCpuMsPerDelivery') {
  const usable = points.filter((point) => Number.isFinite(point[key]) && point[key] > 0);
  if (usable.length < 2) return null;
  const values = usable.map((point) => point[key]);
  const spread = Math.max(...values) / Math.min(...values);
  let steepest = null;
  for (let i = 1; i < usable.length; i++) {
    const factor = usable[i][key] / usable[i - 1][key];
    if (!steepest || Math.abs(Math.log(factor)) > Math.abs(Math.log(steepest.factor))) steepest = { from: usable[i - 1], to: usable[i], factor };
  }
  const names = new Set([...Object.keys(steepest.from.perProcessMsPerDelivery ?? {}), ...Object.keys(steepest.to.perProcessMsPerDelivery ?? {})]);
  const causes = [...names]
    .map((name) => [name, (steepest.to.perProcessMsPerDelivery?.[name] ?? 0) - (steepest.from.perProcessMsPerDelivery?.[name] ?? 0)])
    .sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
  return { spread, flat: spread <= FLAT_WITHIN, steepest, causes };
}

const signed = (ms) => `${ms >= 0 ? '+' : '-'}${Math.abs(ms).toFixed(2)}`;

/** One sentence for costBend's result: `label(point)` names a point ("10 webhooks"). */
export function describeBend(name, bend, label) {
  if (!bend) return `${name}: not enough points to say where cost bends`;
  const { spread, flat, steepest, causes } = bend;
  const top = causes
    .slice(0, 3)
    .map(([process, delta]) => `${process} ${signed(delta)} ms`)
    .join(', ');
  return (
    `${name}: cost per delivery spreads ${spread.toFixed(2)}x from the cheapest point to the dearest (flat within ${FLAT_WITHIN}x: ${flat ? 'ok' : 'MISSED'}); ` +
    `it bends most between ${label(steepest.from)} and ${label(steepest.to)} (x${steepest.factor.toFixed(2)}), where per delivery: ${top}`
  );
}

/** Splits "1,10,100" (a BENCH_CURVE_* list) into positive integers; refuses anything else. */
export function parseList(name, text) {
  const values = String(text)
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map(Number);
  if (values.length === 0 || values.some((value) => !Number.isFinite(value) || value <= 0)) throw new Error(`${name} must be a comma-separated list of positive numbers`);
  return values;
}
