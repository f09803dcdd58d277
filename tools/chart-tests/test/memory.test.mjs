// Memory defaults of every service: V8's heap sizing (NODE_OPTIONS) and glibc's malloc arenas
// (MALLOC_ARENA_MAX) come from the chart's `env`, a service's own `env` wins, and the benchmarks
// measure the services with the same settings as the chart ships.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { render } from '../src/helm.mjs';
import { SERVICES, byComponent } from '../src/objects.mjs';
import { chartDir, repoRoot } from '../src/paths.mjs';

const minimal = { valuesFile: 'minimal-values.yaml' };
const envFor = (objects, name) => byComponent(objects, 'ConfigMap', name).data;
const chartEnv = parse(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')).env;

describe('memory defaults', () => {
  test('every service runs with a 1 MB young generation, a 128 MB old generation and two malloc arenas', () => {
    expect(chartEnv).toEqual({ NODE_OPTIONS: '--max-old-space-size=128 --max-semi-space-size=1', MALLOC_ARENA_MAX: '2' });
    const objects = render(minimal);
    for (const name of SERVICES) {
      const env = envFor(objects, name);
      expect([name, env.NODE_OPTIONS, env.MALLOC_ARENA_MAX]).toEqual([name, chartEnv.NODE_OPTIONS, chartEnv.MALLOC_ARENA_MAX]);
    }
  });

  test("a service's own env wins over the chart's for that service alone", () => {
    const objects = render({ ...minimal, set: ['delivery.env.NODE_OPTIONS=--max-old-space-size=192 --max-semi-space-size=2', 'delivery.env.MALLOC_ARENA_MAX=4'] });
    expect(envFor(objects, 'delivery').NODE_OPTIONS).toBe('--max-old-space-size=192 --max-semi-space-size=2');
    expect(envFor(objects, 'delivery').MALLOC_ARENA_MAX).toBe('4');
    expect(envFor(objects, 'issue').NODE_OPTIONS).toBe(chartEnv.NODE_OPTIONS);
    expect(envFor(objects, 'issue').MALLOC_ARENA_MAX).toBe('2');
  });

  test('the benchmarks start the services with the chart defaults', () => {
    const source = readFileSync(path.join(repoRoot, 'tools/bench/src/process-stats.mjs'), 'utf8');
    expect(source).toContain(`process.env.BENCH_NODE_OPTIONS ?? '${chartEnv.NODE_OPTIONS}'`);
    expect(source).toContain(`process.env.BENCH_MALLOC_ARENA_MAX ?? '${chartEnv.MALLOC_ARENA_MAX}'`);
  });
});
