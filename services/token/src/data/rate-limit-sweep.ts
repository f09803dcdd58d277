import type { Queryable } from '@worklane/db';
import { BackgroundWorker, type Logger, type Registry } from '@worklane/observability';
import { deleteFullBuckets } from './rate-limit-buckets';

export interface RateLimitSweepOptions {
  db: Queryable;
  logger: Logger;
  /** Pause between sweeps (RATE_LIMIT_SWEEP_INTERVAL_MS). */
  intervalMs: number;
  registry?: Registry;
}

/**
 * Keeps rate_limit_buckets to the keys in use: every interval, deletes the shared buckets that
 * have refilled since their last sync. Every replica runs one; they skip each other's rows.
 */
export class RateLimitSweep {
  private readonly worker: BackgroundWorker;

  constructor(private readonly options: RateLimitSweepOptions) {
    this.worker = new BackgroundWorker({ name: 'rate limit sweep', logger: options.logger, registry: options.registry, idleMs: options.intervalMs, pass: () => this.pass() });
  }

  start(): void {
    this.worker.start();
  }

  stop(): Promise<boolean> {
    return this.worker.stop();
  }

  private async pass(): Promise<'idle'> {
    const removed = await deleteFullBuckets(this.options.db);
    if (removed > 0) this.options.logger.debug({ removed }, 'removed refilled rate-limit buckets');
    return 'idle';
  }
}
