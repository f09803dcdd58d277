import { withTransaction, type Pool, type PoolClient } from '@worklane/db';
import { SpanKind, inSpan, injectTraceContext, restoreTraceContext, type JetStreamClient } from '@worklane/messaging';
import type { Logger } from '@worklane/observability';
import { OUTBOX_CHANNEL } from '../data/issues';

interface OutboxRow {
  id: string;
  subject: string;
  payload: string;
  trace_context: Record<string, string> | null;
}

export interface OutboxRelayOptions {
  pool: Pool;
  js: JetStreamClient;
  logger: Logger;
  /** Rows claimed per transaction. */
  batchSize: number;
  /** Fallback when a notification is missed (e.g. while the LISTEN connection reconnects). */
  pollIntervalMs: number;
  /** Published rows older than this are deleted. */
  retentionMs: number;
  /** Longest pause between attempts while NATS or PostgreSQL is failing. */
  maxBackoffMs?: number;
  onPublished?: (count: number) => void;
  /** Declares the stream again after a failed pass, in case the server lost it. */
  ensureStream?: () => Promise<void>;
}

const CLEANUP_INTERVAL_MS = 10 * 60_000;

/**
 * Publishes outbox rows to JetStream. Each batch is claimed with FOR UPDATE SKIP LOCKED, so any
 * number of issue replicas relay side by side without publishing a row twice; a crash after the
 * publish but before the commit re-publishes the row later with the same `Nats-Msg-Id`, which
 * JetStream drops as a duplicate.
 */
export class OutboxRelay {
  private running = false;
  private loop: Promise<void> | undefined;
  private wakeUp: (() => void) | undefined;
  private pendingWake = false;
  private listener: PoolClient | undefined;
  private listenRetry: NodeJS.Timeout | undefined;
  private lastCleanup = 0;

  constructor(private readonly options: OutboxRelayOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.listen();
    this.loop = this.run();
  }

  /** Runs the loop now instead of at the next poll. */
  wake(): void {
    this.pendingWake = true;
    this.wakeUp?.();
  }

  /** Finishes the batch in flight, then stops. Unpublished rows stay for the next relay. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.listenRetry);
    this.wake();
    await this.loop;
    const listener = this.listener;
    this.listener = undefined;
    if (listener) {
      await listener.query(`UNLISTEN ${OUTBOX_CHANNEL}`).catch(() => {});
      listener.release();
    }
  }

  /** Publishes one batch; resolves to the number of rows it published. */
  async publishBatch(): Promise<number> {
    const { pool, js, batchSize, logger } = this.options;
    let failed = 0;
    const published = await withTransaction(pool, async (client) => {
      const { rows } = await client.query<OutboxRow>(
        `SELECT id, subject, payload, trace_context FROM outbox
         WHERE published_at IS NULL ORDER BY created_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [batchSize],
      );
      if (rows.length === 0) return 0;
      const results = await Promise.allSettled(rows.map((row) => this.publish(js, row)));
      const done = rows.filter((_, index) => results[index]?.status === 'fulfilled').map((row) => row.id);
      failed = rows.length - done.length;
      if (failed > 0) {
        const reason = (results.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason;
        logger.warn({ err: reason, failed, published: done.length }, 'outbox publish failed; will retry');
      }
      if (done.length > 0) await client.query('UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[])', [done]);
      return done.length;
    });
    if (published > 0) this.options.onPublished?.(published);
    if (failed > 0) throw new Error(`${failed} outbox events could not be published`);
    return published;
  }

  private publish(js: JetStreamClient, row: OutboxRow) {
    return inSpan(
      `${row.subject} publish`,
      { kind: SpanKind.PRODUCER, parent: restoreTraceContext(row.trace_context), attributes: { 'messaging.system': 'nats', 'messaging.destination.name': row.subject, 'messaging.message.id': row.id } },
      () => js.publish(row.subject, row.payload, { msgID: row.id, headers: injectTraceContext() }),
    );
  }

  private async run(): Promise<void> {
    const { logger, pollIntervalMs, maxBackoffMs = 5_000 } = this.options;
    let backoffMs = 0;
    while (this.running) {
      this.pendingWake = false;
      let published = 0;
      try {
        published = await this.publishBatch();
        backoffMs = 0;
        await this.cleanUp();
      } catch (error) {
        backoffMs = Math.min(maxBackoffMs, Math.max(250, backoffMs * 2));
        logger.warn({ err: error, retryInMs: backoffMs }, 'outbox relay pass failed');
        await this.options.ensureStream?.().catch(() => {});
      }
      if (!this.running) break;
      // A full batch means more rows are probably waiting: go again at once.
      if (backoffMs === 0 && published >= this.options.batchSize) continue;
      await this.sleep(backoffMs || pollIntervalMs, backoffMs > 0);
    }
  }

  /** Waits for a notification or the timeout; during backoff notifications do not cut it short. */
  private sleep(ms: number, ignoreWake: boolean): Promise<void> {
    if (this.pendingWake && !ignoreWake) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        if (!ignoreWake || !this.running) {
          this.wakeUp = undefined;
          done();
        }
      };
    });
  }

  private async cleanUp(): Promise<void> {
    if (Date.now() - this.lastCleanup < CLEANUP_INTERVAL_MS) return;
    this.lastCleanup = Date.now();
    const { rowCount } = await this.options.pool.query(
      `DELETE FROM outbox WHERE id IN (
         SELECT id FROM outbox WHERE published_at < now() - make_interval(secs => $1) LIMIT 10000
       )`,
      [this.options.retentionMs / 1000],
    );
    if (rowCount) this.options.logger.debug({ deleted: rowCount }, 'deleted published outbox rows');
  }

  /** LISTEN on a pooled connection of its own; if that connection dies, polling covers until it is back. */
  private async listen(): Promise<void> {
    if (!this.running) return;
    try {
      const client = await this.options.pool.connect();
      client.on('notification', () => this.wake());
      client.on('error', (error) => {
        this.options.logger.warn({ err: error }, 'outbox LISTEN connection lost');
        if (this.listener === client) this.listener = undefined;
        client.release(error);
        this.retryListen();
      });
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (!this.running) {
        client.release();
        return;
      }
      this.listener = client;
    } catch (error) {
      this.options.logger.warn({ err: error }, 'cannot LISTEN for outbox rows; polling only for now');
      this.retryListen();
    }
  }

  private retryListen(): void {
    if (!this.running) return;
    clearTimeout(this.listenRetry);
    this.listenRetry = setTimeout(() => void this.listen(), 2_000);
  }
}
