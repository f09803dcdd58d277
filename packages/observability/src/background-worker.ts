import type { Logger } from './logger';
import { promClient, type Registry } from './metrics';

/**
 * What one pass of a worker says about the next: `more` (work is left: go again at once), `idle`
 * (wait the idle interval, or until woken), or a number of milliseconds to wait (never longer
 * than the idle interval).
 */
export type PassResult = 'more' | 'idle' | number;

export interface BackgroundWorkerOptions {
  /** Short name for logs and the `worker` label of the metrics, e.g. "fan-out backlog". */
  name: string;
  logger: Logger;
  /** One unit of work. A throw counts as a failed pass and backs off. */
  pass: () => Promise<PassResult>;
  /** Wait between passes with nothing to do, unless woken. */
  idleMs: number;
  /** First pause after a failed pass; doubled after each further failure. Default 250 ms. */
  minBackoffMs?: number;
  /** Longest pause after failed passes. Default 5 s. */
  maxBackoffMs?: number;
  /** Where the passes and failures are counted; nothing is counted without it. */
  registry?: Registry;
  /** Called after a failed pass, before the backoff (for example to declare a lost stream again). */
  onFailure?: (error: unknown) => Promise<void> | void;
}

/**
 * While passes keep failing, a worker logs the first failure and then at most one line per this
 * span (with the number of failures so far), so an outage of a dependency logs a few lines per
 * worker rather than one per backoff.
 */
export const FAILURE_LOG_INTERVAL_MS = 30_000;

/** Counters shared by every worker of a registry, told apart by the `worker` label. */
interface WorkerCounters {
  passes: promClient.Counter<'worker'>;
  failures: promClient.Counter<'worker'>;
}
const countersByRegistry = new WeakMap<Registry, WorkerCounters>();

function countersOf(registry: Registry): WorkerCounters {
  let counters = countersByRegistry.get(registry);
  if (!counters) {
    counters = {
      passes: new promClient.Counter({ name: 'worklane_worker_passes_total', help: 'Passes of a background worker', labelNames: ['worker'], registers: [registry] }),
      failures: new promClient.Counter({
        name: 'worklane_worker_failures_total',
        help: 'Passes of a background worker that failed (each is followed by a backoff)',
        labelNames: ['worker'],
        registers: [registry],
      }),
    };
    countersByRegistry.set(registry, counters);
  }
  return counters;
}

/**
 * A loop of passes in the background: start, wake, stop with a deadline, exponential backoff with
 * jitter after failures, passes and failures counted in metrics, a failing streak logged at its
 * start, then at most every FAILURE_LOG_INTERVAL_MS, and at its end. The one way the services run
 * their background work, so each of them starts, stops and fails the same way.
 */
export class BackgroundWorker {
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private consecutiveFailures = 0;
  private lastFailureLogAt = 0;
  private readonly counters: WorkerCounters | undefined;

  constructor(private readonly options: BackgroundWorkerOptions) {
    this.counters = options.registry ? countersOf(options.registry) : undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Runs the next pass now instead of after the wait (a backoff is not cut short). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** False while passes keep failing: the last one failed. */
  get healthy(): boolean {
    return this.consecutiveFailures === 0;
  }

  /**
   * Lets the pass in progress finish, then stops. Resolves to false when the pass is still running
   * after `deadlineMs` (the caller's shutdown goes on without it).
   */
  async stop(deadlineMs = 10_000): Promise<boolean> {
    this.running = false;
    this.wakeUp?.();
    if (!this.loop) return true;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      this.loop.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), deadlineMs);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) this.options.logger.warn({ worker: this.options.name, deadlineMs }, 'background worker still busy at its stop deadline');
    return finished;
  }

  private async run(): Promise<void> {
    const { name, logger, pass, idleMs, minBackoffMs = 250, maxBackoffMs = 5_000 } = this.options;
    while (this.running) {
      this.woken = false;
      let waitMs: number;
      try {
        const result = await pass();
        this.counters?.passes.inc({ worker: name });
        if (this.consecutiveFailures > 0) logger.info({ worker: name, failures: this.consecutiveFailures }, 'background worker recovered');
        this.consecutiveFailures = 0;
        if (result === 'more') continue;
        waitMs = result === 'idle' ? idleMs : Math.min(idleMs, Math.max(0, result));
      } catch (error) {
        this.counters?.failures.inc({ worker: name });
        this.consecutiveFailures += 1;
        waitMs = backoffMs(this.consecutiveFailures, minBackoffMs, maxBackoffMs);
        const now = Date.now();
        if (this.consecutiveFailures === 1 || now - this.lastFailureLogAt >= FAILURE_LOG_INTERVAL_MS) {
          logger.warn({ err: error, worker: name, failures: this.consecutiveFailures, retryInMs: waitMs }, 'background worker pass failed');
          this.lastFailureLogAt = now;
        }
        await Promise.resolve(this.options.onFailure?.(error)).catch(() => {});
        if (!this.running) break;
        await this.sleep(waitMs, false);
        continue;
      }
      if (!this.running) break;
      await this.sleep(waitMs, true);
    }
  }

  /** Waits `ms`, or less when woken and `wakeable`; a stop always ends the wait. */
  private sleep(ms: number, wakeable: boolean): Promise<void> {
    if (!this.running || (wakeable && this.woken)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = () => {
        if (!this.running || wakeable) done();
      };
    });
  }
}

/** The pause after the n-th failure in a row: doubling from `minMs` up to `maxMs`, with half of it random. */
export function backoffMs(failures: number, minMs: number, maxMs: number): number {
  const ceiling = Math.min(maxMs, minMs * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}
