import { untilShortBatch, type Pool } from '@worklane/db';
import { BackgroundWorker, type Logger, type Registry } from '@worklane/observability';

/** Rows removed by one batch. */
export interface Removed {
  deliveries: number;
  attempts: number;
}

/**
 * Deletes up to `limit` deliveries finished more than `retentionMs` ago, oldest first, with their
 * attempts, in one short statement. The attempts go by a join rather than one cascade per delivery;
 * rows another replica's pass holds are skipped. Pending deliveries are never removed, however old.
 */
export async function deleteExpiredBatch(pool: Pick<Pool, 'query'>, retentionMs: number, limit: number): Promise<Removed> {
  const { rows } = await pool.query<Removed>({
    name: 'deliveries-delete-expired',
    text: `WITH doomed AS (
       SELECT id FROM deliveries
       WHERE status <> 'pending' AND completed_at < now() - make_interval(secs => $1)
       ORDER BY completed_at
       LIMIT $2
       FOR UPDATE SKIP LOCKED
     ), attempts AS (
       DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM doomed) RETURNING 1
     ), removed AS (
       DELETE FROM deliveries WHERE id IN (SELECT id FROM doomed) RETURNING 1
     )
     SELECT (SELECT count(*) FROM removed)::int AS deliveries, (SELECT count(*) FROM attempts)::int AS attempts`,
    values: [retentionMs / 1000, limit],
  });
  return rows[0] ?? { deliveries: 0, attempts: 0 };
}

export interface RetentionOptions {
  pool: Pick<Pool, 'query'>;
  logger: Logger;
  /** Finished deliveries older than this are removed. */
  retentionMs: number;
  /** Deliveries removed per statement: each batch is a short transaction of its own. */
  batchSize: number;
  /** Pause between passes once nothing expired is left. */
  intervalMs: number;
  onRemoved?: (removed: Removed) => void;
  /** Where the worker's passes and failures are counted. */
  registry?: Registry;
}

/**
 * Keeps the delivery log to its retention window. A pass removes expired deliveries batch after
 * batch until none is left, so however fast deliveries are written, a pass catches up (the rate it
 * removes at is the database's delete rate, tens of thousands of rows a second, not a fixed
 * quota); then it waits `intervalMs`. Every replica runs one; their batches skip each other's rows.
 */
export class DeliveryRetention {
  private stopped = false;
  private readonly worker: BackgroundWorker;

  constructor(private readonly options: RetentionOptions) {
    this.worker = new BackgroundWorker({ name: 'delivery retention', logger: options.logger, registry: options.registry, idleMs: options.intervalMs, pass: () => this.pass() });
  }

  start(): void {
    this.stopped = false;
    this.worker.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.worker.stop();
  }

  /** Removes everything expired now, batch after batch; resolves to what it removed. */
  async removeExpired(): Promise<Removed> {
    const { pool, retentionMs, batchSize, onRemoved } = this.options;
    const total: Removed = { deliveries: 0, attempts: 0 };
    const batch = async () => {
      const removed = await deleteExpiredBatch(pool, retentionMs, batchSize);
      total.deliveries += removed.deliveries;
      total.attempts += removed.attempts;
      if (removed.deliveries > 0) onRemoved?.(removed);
      return removed.deliveries;
    };
    await untilShortBatch(batch, batchSize, { keepGoing: () => !this.stopped });
    return total;
  }

  private async pass(): Promise<'idle'> {
    const started = Date.now();
    const removed = await this.removeExpired();
    if (removed.deliveries > 0) {
      const seconds = Math.max(0.001, (Date.now() - started) / 1000);
      this.options.logger.info({ ...removed, rowsPerSecond: Math.round((removed.deliveries + removed.attempts) / seconds) }, 'removed deliveries past their retention');
    }
    return 'idle';
  }
}
