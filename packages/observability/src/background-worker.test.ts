import { BackgroundWorker, backoffMs, type PassResult } from './background-worker';
import { createLogger, type Logger } from './logger';
import { promClient } from './metrics';

const logger = createLogger('test', 'silent');

/** Resolves once `condition` holds, checking on every turn of the event loop. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('BackgroundWorker', () => {
  it('runs passes back to back while there is more, then waits until woken', async () => {
    const results: PassResult[] = ['more', 'more', 'idle'];
    let passes = 0;
    const worker = new BackgroundWorker({ name: 'test', logger, idleMs: 3_600_000, pass: async () => results[passes++] ?? 'idle' });
    worker.start();
    await until(() => passes === 3);
    worker.wake();
    await until(() => passes === 4);
    expect(await worker.stop()).toBe(true);
    expect(passes).toBe(4);
  });

  it('counts passes and failures, backs off after a failure and reports itself unhealthy until a pass succeeds', async () => {
    const registry = new promClient.Registry();
    let passes = 0;
    const failures: unknown[] = [];
    const worker = new BackgroundWorker({
      name: 'flaky',
      logger,
      registry,
      idleMs: 3_600_000,
      minBackoffMs: 1,
      maxBackoffMs: 2,
      onFailure: (error) => void failures.push(error),
      pass: async () => {
        passes += 1;
        if (passes <= 2) throw new Error(`failure ${passes}`);
        return 'idle';
      },
    });
    worker.start();
    await until(() => passes === 3);
    expect(worker.healthy).toBe(true);
    await worker.stop();
    expect(failures.map((error) => (error as Error).message)).toEqual(['failure 1', 'failure 2']);
    const metrics = await registry.getMetricsAsJSON();
    const value = (name: string) => metrics.find((metric) => metric.name === name)?.values.find((entry) => entry.labels.worker === 'flaky')?.value;
    expect(value('worklane_worker_failures_total')).toBe(2);
    expect(value('worklane_worker_passes_total')).toBe(1);
  });

  it('logs a failing streak once at its start and once when it ends, not at every backoff', async () => {
    const lines: { msg: string; failures?: number }[] = [];
    const record = (fields: { failures?: number }, msg: string) => void lines.push({ msg, failures: fields.failures });
    const recording = { warn: record, info: record } as unknown as Logger;
    let passes = 0;
    const worker = new BackgroundWorker({
      name: 'outage',
      logger: recording,
      idleMs: 3_600_000,
      minBackoffMs: 1,
      maxBackoffMs: 2,
      pass: async () => {
        passes += 1;
        if (passes <= 20) throw new Error('the token service is unavailable');
        return 'idle';
      },
    });
    worker.start();
    await until(() => passes === 21);
    await worker.stop();
    expect(lines).toEqual([
      { msg: 'background worker pass failed', failures: 1 },
      { msg: 'background worker recovered', failures: 20 },
    ]);
  });

  it('stops at its deadline when a pass does not finish', async () => {
    let started = false;
    const worker = new BackgroundWorker({
      name: 'stuck',
      logger,
      idleMs: 1_000,
      pass: () => {
        started = true;
        return new Promise<PassResult>(() => {});
      },
    });
    worker.start();
    await until(() => started);
    expect(await worker.stop(5)).toBe(false);
  });
});

describe('backoffMs', () => {
  it('doubles from the minimum up to the maximum, keeping at least half of it', () => {
    for (let failures = 1; failures <= 10; failures++) {
      const ceiling = Math.min(1_000, 100 * 2 ** (failures - 1));
      const pause = backoffMs(failures, 100, 1_000);
      expect(pause).toBeGreaterThanOrEqual(ceiling / 2);
      expect(pause).toBeLessThanOrEqual(ceiling);
    }
  });
});
