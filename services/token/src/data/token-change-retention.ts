import type { Queryable } from '@worklane/db';
import { BackgroundWorker, type Logger, type Registry } from '@worklane/observability';
import { pruneTokenChanges } from './token-changes';

export interface TokenChangeRetentionOptions {
  db: Queryable;
  logger: Logger;
  /** How long a change is kept (TOKEN_CHANGES_RETENTION_SECONDS). */
  retentionSeconds: number;
  registry?: Registry;
}

/**
 * Keeps the token change feed short: deletes the changes older than the retention, a tenth of it
 * (at most a minute) apart. A gateway whose cursor falls behind what is kept is told to forget its
 * cache (ListTokenChanges answers reset). Every replica runs one; deleting twice does no harm.
 */
export class TokenChangeRetention {
  private readonly worker: BackgroundWorker;

  constructor(private readonly options: TokenChangeRetentionOptions) {
    const intervalMs = Math.min(60_000, (options.retentionSeconds * 1000) / 10);
    this.worker = new BackgroundWorker({ name: 'token change retention', logger: options.logger, registry: options.registry, idleMs: intervalMs, pass: () => this.pass() });
  }

  start(): void {
    this.worker.start();
  }

  stop(): Promise<boolean> {
    return this.worker.stop();
  }

  private async pass(): Promise<'idle'> {
    const removed = await pruneTokenChanges(this.options.db, this.options.retentionSeconds);
    if (removed > 0) this.options.logger.debug({ removed }, 'removed old token changes');
    return 'idle';
  }
}
