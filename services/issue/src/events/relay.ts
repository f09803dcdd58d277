import type { Pool, PoolClient } from '@worklane/db';
import { SpanKind, inSpan, injectTraceContext, restoreTraceContext, type JetStreamClient } from '@worklane/messaging';
import type { Logger } from '@worklane/observability';
import { OUTBOX_CHANNEL } from '../data/issues';

interface OutboxRow {
  id: string;
  subject: string;
  payload: string;
  trace_context: Record<string, string> | null;
  created_at: Date;
}

/**
 * How long a relay owns the rows it claimed: well beyond a publish (JetStream answers or times
 * out within seconds), and the longest a relay that dies mid-publish delays them.
 */
const CLAIM_SECONDS = 15;

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
 * A notification arrives for every committed event; waiting this long after one lets the events
 * committed meanwhile go out in the same batch, at the cost of a few milliseconds of latency.
 */
const WAKE_COALESCE_MS = 10;

/**
 * Publishes outbox rows to JetStream. Each batch is leased with FOR UPDATE SKIP LOCKED, so any
 * number of issue replicas relay side by side without publishing a row twice; a crash after the
 * publish but before the row is marked re-publishes it later with the same `Nats-Msg-Id`, which
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

  /**
   * Publishes one batch; resolves to the number of rows it published. Rows are leased with
   * FOR UPDATE SKIP LOCKED, so relays of other replicas take other rows meanwhile.
   */
  async publishBatch(): Promise<number> {
    const { pool, js, batchSize, logger } = this.options;
    const { rows } = await pool.query<OutboxRow>({
      name: 'outbox-claim',
      text: `UPDATE outbox SET claimed_until = now() + make_interval(secs => $2)
       WHERE id IN (
         SELECT id FROM outbox
         WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
         ORDER BY created_at
         LIMIT $1
         FOR UPDATE SKIP LOCKED
       )
       RETURNING id, subject, payload, trace_context, created_at`,
      values: [batchSize, CLAIM_SECONDS],
    });
    if (rows.length === 0) return 0;
    rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
    const results = await Promise.allSettled(rows.map((row) => this.publish(js, row)));
    const done = rows.filter((_, index) => results[index]?.status === 'fulfilled').map((row) => row.id);
    const failed = rows.filter((_, index) => results[index]?.status === 'rejected').map((row) => row.id);
    if (done.length > 0) {
      await pool.query({
        name: 'outbox-mark-published',
        text: 'UPDATE outbox SET published_at = now(), claimed_until = NULL WHERE id = ANY($1::uuid[])',
        values: [done],
      });
      this.options.onPublished?.(done.length);
    }
    if (failed.length > 0) {
      // Released at once, so the next pass (after the backoff) retries them.
      await pool.query('UPDATE outbox SET claimed_until = NULL WHERE id = ANY($1::uuid[])', [failed]).catch(() => {});
      const reason = (results.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason;
      logger.warn({ err: reason, failed: failed.length, published: done.length }, 'outbox publish failed; will retry');
      throw new Error(`${failed.length} outbox events could not be published`);
    }
    return done.length;
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
        if (!this.running) return done();
        if (ignoreWake) return;
        this.wakeUp = undefined;
        clearTimeout(timer);
        setTimeout(done, WAKE_COALESCE_MS);
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
