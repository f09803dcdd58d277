import type { Pool, PoolClient } from '@worklane/db';
import {
  ISSUE_EVENTS_DEAD_LETTER_SUBJECT,
  SpanKind,
  encodeEvent,
  inSpan,
  injectTraceContext,
  readDeadLetterNotice,
  readIssueEvent,
  restoreTraceContext,
  type JetStreamClient,
} from '@worklane/messaging';
import { BackgroundWorker, type Logger, type PassResult, type Registry } from '@worklane/observability';
import { OUTBOX_CHANNEL, type CommittedEventPublisher, type OutboxEvent } from '../data/issues';
import { moveToDeadLetters, permanentFailure, prepareMessage, type DeadLetterReason, type PermanentFailure } from './dead-letter';

type OutboxRow = OutboxEvent;

/** OUTBOX_LEASE_SECONDS's default (the relay's options say what it means). */
const DEFAULT_LEASE_SECONDS = 15;

/** OUTBOX_MARK_WITHIN_MS's default. */
const DEFAULT_MARK_WITHIN_MS = 100;

/** How many batches deep a claim looks for the earlier events of the issues it takes. */
const HEAD_FACTOR = 4;

/**
 * The sessions of the relay's pool. The relay's own writes (leases, marks, dead-letter
 * moves) commit without waiting for the WAL flush: PostgreSQL flushes them a moment later with
 * the next durable commit or its WAL writer. A crash of PostgreSQL can lose only the last of them,
 * and each loss is harmless: a lost lease or mark makes a relay publish the row again, with the
 * same Nats-Msg-Id, which JetStream drops as a duplicate; a lost dead-letter move is done again.
 * The issue writes themselves (the API's pool) stay durable before the API answers.
 */
export const RELAY_SESSION_SETTINGS = { synchronous_commit: 'off' } as const;

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
  /** The largest message the NATS server accepts (its `max_payload`), read at each batch. */
  maxPayload: () => number;
  /** Dead-lettered events older than this are deleted. */
  deadLetterRetentionMs: number;
  /** Expired rows removed per statement (10,000 unless given). */
  retentionBatchSize?: number;
  /** How often expired rows are looked for once none is left (10 minutes unless given). */
  retentionIntervalMs?: number;
  /**
   * How long a relay owns the rows it took (15 s unless given): well beyond a publish (JetStream
   * answers or times out within seconds), and the longest a relay that dies mid-publish delays them.
   */
  leaseSeconds?: number;
  /**
   * The longest a published row waits for its mark when no notification brings the next claim
   * sooner (the poll interval, when shorter; 100 ms unless given). Marks are written together, one
   * statement per this interval at most however many events went out; until its mark a row stays
   * leased, so a later event of its issue waiting for a claim waits this long at most.
   */
  markWithinMs?: number;
  onDeadLettered?: (reason: DeadLetterReason) => void;
  /** Where the relay's passes and failures are counted. */
  registry?: Registry;
}

/** What became of one outbox row in a batch. */
type RowResult = 'published' | 'failed';

/** OUTBOX_RETENTION_INTERVAL_MS's default: how often expired rows are looked for once none is left. */
const RETENTION_INTERVAL_MS = 10 * 60_000;

/** Rows removed per statement; batches run back to back until none expired is left. */
const RETENTION_BATCH_SIZE = 10_000;

/**
 * Publishes outbox rows to JetStream. Each batch is leased with FOR UPDATE SKIP LOCKED, so any
 * number of issue replicas relay side by side without publishing a row twice; a crash after the
 * publish but before the row is marked re-publishes it later with the same `Nats-Msg-Id`, which
 * JetStream drops as a duplicate.
 */
export class OutboxRelay {
  private running = false;
  private readonly worker: BackgroundWorker;
  /** The LISTEN connection while it listens, and how to let it go (once). */
  private listener: { client: PoolClient; close: () => void } | undefined;
  private listenRetry: NodeJS.Timeout | undefined;
  private readonly retention: BackgroundWorker;
  /**
   * Rows published (JetStream acknowledged them) but not yet marked in the outbox: the next claim
   * marks them in the same statement, so a batch costs one statement and one commit, not two.
   * Until then they keep their lease, so no other relay takes them or a later event of their issue.
   */
  private unmarked: string[] = [];
  /** Publishes of committed events handed over by this process's creates (publishCommitted). */
  private readonly inFlight = new Set<Promise<void>>();
  private markTimer: NodeJS.Timeout | undefined;
  /** A committed event could not be published at once: until a pass publishes again, creates use the queue. */
  private directPaused = false;
  /**
   * Times the direct path was paused: only a pass that started after the last pause may resume it
   * (one that was already running when a publish failed knows nothing of that failure).
   */
  private directPauses = 0;
  private readonly leaseSeconds: number;
  private readonly markWithinMs: number;

  constructor(private readonly options: OutboxRelayOptions) {
    this.leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.markWithinMs = options.markWithinMs ?? DEFAULT_MARK_WITHIN_MS;
    this.worker = new BackgroundWorker({
      name: 'outbox relay',
      logger: options.logger,
      registry: options.registry,
      idleMs: options.pollIntervalMs,
      maxBackoffMs: options.maxBackoffMs,
      pass: () => this.pass(),
      // A NATS server that lost its storage comes back without the stream: declare it again.
      onFailure: () => options.ensureStream?.(),
    });
    // Apart from publishing, so that removing a large backlog of expired rows never delays an event.
    this.retention = new BackgroundWorker({
      name: 'outbox retention',
      logger: options.logger,
      registry: options.registry,
      idleMs: options.retentionIntervalMs ?? RETENTION_INTERVAL_MS,
      maxBackoffMs: options.maxBackoffMs,
      pass: () => this.removeExpired(),
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.listen();
    this.worker.start();
    this.retention.start();
  }

  /**
   * Runs the loop now instead of at the next poll. Events committed while a batch is being
   * published go out together in the next one, so a burst of notifications costs a few batches,
   * not one pass each.
   */
  wake(): void {
    this.worker.wake();
  }

  /** Finishes the batch in flight, then stops. Unpublished rows stay for the next relay. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.listenRetry);
    await Promise.all([this.worker.stop(), this.retention.stop(), Promise.allSettled([...this.inFlight])]);
    clearTimeout(this.markTimer);
    this.markTimer = undefined;
    await this.markPublished().catch((error) => {
      // Their leases run out and another relay publishes them again, which JetStream drops as duplicates.
      this.options.logger.warn({ err: error, unmarked: this.unmarked.length }, 'could not mark published outbox rows at stop');
    });
    this.listener?.close();
  }

  /**
   * The way this process's creates hand their issue.created events over (IssueStore's
   * `publisher`): each is published as soon as its create has committed, without a claim, as its
   * row was written leased to this relay. A create's event is the first of its issue, so nothing
   * of the issue can be waiting before it; a later event of the issue waits for the mark, as it
   * would behind any leased row.
   */
  committedEventPublisher(): CommittedEventPublisher {
    return {
      leaseSeconds: this.leaseSeconds,
      ready: () => this.running && !this.directPaused && this.worker.healthy,
      publish: (event) => this.publishCommitted(event),
    };
  }

  private publishCommitted(row: OutboxRow): void {
    // Stopping: the row stays leased, and a relay publishes it once the lease runs out.
    if (!this.running) return;
    const publishing = this.publishOrDeadLetter(row).then(
      () => {
        this.unmarked.push(row.id);
        this.options.onPublished?.(1);
        this.markSoon();
      },
      async (error: unknown) => {
        // Released to the relay's queue, which retries it with its backoff (and logs if it keeps
        // failing); the next creates use the queue too until a pass publishes again.
        this.directPaused = true;
        this.directPauses += 1;
        this.options.logger.debug({ err: error, eventId: row.id }, 'a committed event could not be published at once; the relay retries it');
        await this.options.pool.query({ name: 'outbox-release', text: 'UPDATE outbox SET claimed_until = NULL WHERE id = $1', values: [row.id] }).catch(() => {});
        this.wake();
      },
    );
    const tracked = publishing.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  /** The next pass (with the marks) within markWithinMs, unless something wakes the relay sooner. */
  private markSoon(): void {
    if (this.markTimer || !this.running) return;
    this.markTimer = setTimeout(() => {
      this.markTimer = undefined;
      this.wake();
    }, this.markWithinMs);
    this.markTimer.unref();
  }

  /**
   * One batch; a full batch means more rows are probably waiting: go again at once. Rows published
   * but not yet marked are marked by the next claim, at the next notification or poll, and at the
   * latest markWithinMs later.
   */
  private async pass(): Promise<PassResult> {
    const pausesBefore = this.directPauses;
    const published = await this.publishBatch();
    if (this.directPauses === pausesBefore) this.directPaused = false;
    if (published >= this.options.batchSize) return 'more';
    return this.unmarked.length > 0 ? this.markWithinMs : 'idle';
  }

  /** Marks the rows published since the last claim (at stop); the next claim does it otherwise. */
  async markPublished(): Promise<void> {
    const ids = this.takeUnmarked();
    if (ids.length === 0) return;
    try {
      await this.options.pool.query({
        name: 'outbox-mark-published',
        text: 'UPDATE outbox SET published_at = now(), claimed_until = NULL WHERE id = ANY($1::uuid[])',
        values: [ids],
      });
    } catch (error) {
      this.unmarked = ids.concat(this.unmarked);
      throw error;
    }
  }

  /**
   * The rows this relay has published and not yet marked: the backlog gauge leaves them out, as
   * they are on the bus already.
   */
  publishedUnmarked(): readonly string[] {
    return this.unmarked;
  }

  private takeUnmarked(): string[] {
    const ids = this.unmarked;
    this.unmarked = [];
    return ids;
  }

  /**
   * Publishes one batch; resolves to the number of rows it published. Rows are leased with
   * FOR UPDATE SKIP LOCKED, so relays of other replicas take other rows meanwhile.
   *
   * The events of one issue are published one after the other, in commit order; different issues
   * go out side by side. Across replicas, a claim skips every issue of which another relay holds
   * an earlier event (see the claim below). When an event of an issue fails for a transient reason
   * (NATS down, stream full), the later events of that issue wait with it for the next pass, so
   * none overtakes it. An event that can never be published (too large, malformed, refused by
   * JetStream for what it is) is moved to `outbox_dead_letters` and replaced, at its place in the
   * order, by a small dead-letter notice: the issue's later events go out after it, and the team
   * sees the loss.
   */
  async publishBatch(): Promise<number> {
    const { pool, logger } = this.options;
    // The rows this relay published since its last claim are marked by this claim.
    const marking = this.takeUnmarked();
    let rows: OutboxRow[];
    try {
      rows = await this.claim(marking);
    } catch (error) {
      // Nothing was marked: the next claim tries again.
      this.unmarked = marking.concat(this.unmarked);
      throw error;
    }
    if (rows.length === 0) return 0;
    // The claim returns them in commit order, to the microsecond: sorted here, by the Dates pg
    // makes of created_at (milliseconds), two events of one issue in the same millisecond could
    // swap places.
    const byIssue = new Map<string, OutboxRow[]>();
    for (const row of rows) {
      const key = orderKey(row);
      const chain = byIssue.get(key);
      if (chain) chain.push(row);
      else byIssue.set(key, [row]);
    }
    const results = new Map<string, RowResult>();
    let firstError: unknown;
    await Promise.all(
      [...byIssue.values()].map(async (chain) => {
        for (const [index, row] of chain.entries()) {
          try {
            await this.publishOrDeadLetter(row);
            results.set(row.id, 'published');
          } catch (error) {
            firstError ??= error;
            for (const waiting of chain.slice(index)) results.set(waiting.id, 'failed');
            return;
          }
        }
      }),
    );
    const done = rows.filter((row) => results.get(row.id) === 'published').map((row) => row.id);
    const failed = rows.filter((row) => results.get(row.id) !== 'published').map((row) => row.id);
    if (done.length > 0) {
      // Marked by the next claim (or at stop). A crash before then leaves them leased: once the
      // lease runs out a relay publishes them again with the same Nats-Msg-Id, and JetStream drops
      // the copy (its duplicate window is far longer than the lease).
      this.unmarked.push(...done);
      this.options.onPublished?.(done.length);
    }
    if (failed.length > 0) {
      // Released at once, so the next pass (after the backoff) retries them.
      await pool.query('UPDATE outbox SET claimed_until = NULL WHERE id = ANY($1::uuid[])', [failed]).catch(() => {});
      logger.warn({ err: firstError, failed: failed.length, published: done.length }, 'outbox publish failed; will retry');
      throw new Error(`${failed.length} outbox events could not be published`);
    }
    return done.length;
  }

  /**
   * Marks `marking` published and claims the next batch, in one statement. The rows being marked
   * are left out of the head (the statement still sees them unpublished), so that they neither
   * count as waiting nor make their issue busy. The head of the queue (HEAD_FACTOR batches, oldest
   * first) holds, for every issue in it, all of that issue's earlier unpublished events. Rows of
   * the head that this claim cannot take (another relay holds or is taking them) make their issue
   * busy, and none of its rows is taken now.
   */
  private async claim(marking: string[]): Promise<OutboxRow[]> {
    const { rows } = await this.options.pool.query<OutboxRow>({
      name: 'outbox-mark-and-claim',
      text: `WITH marked AS (
         UPDATE outbox SET published_at = now(), claimed_until = NULL
         WHERE id = ANY($3::uuid[])
       ), head AS (
         SELECT id, order_key FROM outbox
         WHERE published_at IS NULL AND NOT (id = ANY($3::uuid[]))
         ORDER BY created_at
         LIMIT $1 * ${HEAD_FACTOR}
       ), lockable AS (
         SELECT o.id, o.order_key FROM outbox AS o JOIN head USING (id)
         WHERE o.published_at IS NULL AND (o.claimed_until IS NULL OR o.claimed_until < now())
         ORDER BY o.created_at
         FOR UPDATE OF o SKIP LOCKED
       ), busy AS (
         SELECT DISTINCT order_key FROM head
         WHERE order_key IS NOT NULL AND id NOT IN (SELECT id FROM lockable)
       ), chosen AS (
         SELECT id FROM lockable
         WHERE order_key IS NULL OR order_key NOT IN (SELECT order_key FROM busy)
         LIMIT $1
       ), claimed AS (
         UPDATE outbox SET claimed_until = now() + make_interval(secs => $2)
         WHERE id IN (SELECT id FROM chosen)
         RETURNING id, subject, payload, trace_context, created_at, order_key
       )
       SELECT * FROM claimed ORDER BY created_at`,
      values: [this.options.batchSize, this.leaseSeconds, marking],
    });
    return rows;
  }

  /**
   * Publishes a row as its event's envelope (built by packages/messaging from what the outbox
   * recorded); a permanent failure moves the event to the dead letters and publishes its notice
   * instead. Throws only for transient failures (the row stays in the outbox).
   */
  private async publishOrDeadLetter(row: OutboxRow): Promise<void> {
    if (row.subject === ISSUE_EVENTS_DEAD_LETTER_SUBJECT) return this.publishNotice(row);
    const prepared = prepareMessage(row.payload, this.options.maxPayload());
    let failure: PermanentFailure;
    if ('message' in prepared) {
      try {
        await this.publish(row, prepared.message);
        return;
      } catch (error) {
        const permanent = permanentFailure(error);
        if (!permanent) throw error;
        failure = permanent;
      }
    } else {
      failure = prepared.failure;
    }
    const { event } = prepared;
    const notice = await moveToDeadLetters(this.options.pool, row, event, failure);
    this.options.onDeadLettered?.(failure.reason);
    this.options.logger.error(
      { eventId: row.id, teamId: event?.team_id, reason: failure.reason, detail: failure.detail },
      'an event can never be published; moved to outbox_dead_letters',
    );
    if (notice) await this.publish({ ...row, subject: ISSUE_EVENTS_DEAD_LETTER_SUBJECT }, notice);
  }

  /**
   * A dead-letter notice left in the outbox (its publish failed transiently, or an earlier release
   * wrote it in the flat form): published as an envelope.
   */
  private async publishNotice(row: OutboxRow): Promise<void> {
    const read = readDeadLetterNotice(row.payload);
    if (!read.ok) {
      this.options.logger.error({ eventId: row.id, problem: read.problem }, 'an unreadable dead-letter notice is dropped; the event stays in outbox_dead_letters');
      return;
    }
    try {
      await this.publish(row, encodeEvent(read.event));
    } catch (error) {
      if (!permanentFailure(error)) throw error;
      // A notice is a few hundred bytes; if even that is refused, the dead letter itself remains.
      this.options.logger.error({ err: error, eventId: row.id }, 'a dead-letter notice was refused; the event stays in outbox_dead_letters only');
    }
  }

  private publish(row: OutboxRow, message: string) {
    const { js } = this.options;
    return inSpan(
      `${row.subject} publish`,
      {
        kind: SpanKind.PRODUCER,
        parent: restoreTraceContext(row.trace_context),
        attributes: { 'messaging.system': 'nats', 'messaging.destination.name': row.subject, 'messaging.message.id': row.id },
      },
      () => js.publish(row.subject, message, { msgID: row.id, headers: injectTraceContext() }),
    );
  }

  /**
   * Removes one batch of published rows past OUTBOX_RETENTION_HOURS and one of dead letters past
   * theirs; `more` while a batch came back full, so that removal keeps up with any rate of events.
   */
  async removeExpired(): Promise<PassResult> {
    const { pool, logger, retentionMs, deadLetterRetentionMs, retentionBatchSize = RETENTION_BATCH_SIZE } = this.options;
    const published = await pool.query({
      name: 'outbox-remove-published',
      text: `DELETE FROM outbox WHERE id IN (
         SELECT id FROM outbox WHERE published_at < now() - make_interval(secs => $1) LIMIT $2
       )`,
      values: [retentionMs / 1000, retentionBatchSize],
    });
    const dead = await pool.query({
      name: 'outbox-remove-dead-letters',
      text: `DELETE FROM outbox_dead_letters WHERE id IN (
         SELECT id FROM outbox_dead_letters WHERE dead_lettered_at < now() - make_interval(secs => $1) LIMIT $2
       )`,
      values: [deadLetterRetentionMs / 1000, retentionBatchSize],
    });
    if (published.rowCount) logger.debug({ deleted: published.rowCount }, 'deleted published outbox rows');
    if (dead.rowCount) logger.debug({ deleted: dead.rowCount }, 'deleted old dead-lettered events');
    return (published.rowCount ?? 0) >= retentionBatchSize || (dead.rowCount ?? 0) >= retentionBatchSize ? 'more' : 'idle';
  }

  /**
   * LISTEN on a pooled connection of its own; if that connection dies, polling covers until it is
   * back. The connection is never handed back for queries: it is closed, exactly once, when it
   * fails, when its LISTEN fails or when the relay stops; an error reported after that is ignored.
   */
  private async listen(): Promise<void> {
    if (!this.running) return;
    try {
      const client = await this.options.pool.connect();
      let closed = false;
      const close = (error?: Error) => {
        if (closed) return;
        closed = true;
        if (this.listener?.client === client) this.listener = undefined;
        client.release(error ?? true);
      };
      client.on('notification', () => this.wake());
      // Stays attached after the close: what the closing connection still reports is expected.
      client.on('error', (error) => {
        if (closed) return;
        this.options.logger.warn({ err: error }, 'outbox LISTEN connection lost');
        close(error);
        this.retryListen();
      });
      try {
        await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
      } catch (error) {
        close(error as Error);
        throw error;
      }
      if (!this.running) {
        close();
        return;
      }
      this.listener = { client, close };
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

/** The issue of an outbox payload, in the flat form (`"issue":{"id":…`) or an envelope (`"data":{"issue":{"id":…`). */
const ISSUE_ID = /"issue":\{"id":(\d+)/;

/** The issue of a payload laid out otherwise (spaces, another key order): read as an event. */
function issueOf(payload: string): number | undefined {
  const read = readIssueEvent(payload);
  return read.ok ? read.event.data.issue.id : undefined;
}

/**
 * The events of one issue keep their order; the issue id is read from the payload (every event
 * carries its issue). A payload that names no issue is ordered on its own.
 */
function orderKey(row: OutboxRow): string {
  const issueId = row.order_key ?? ISSUE_ID.exec(row.payload)?.[1] ?? issueOf(row.payload);
  return issueId === undefined ? `row:${row.id}` : `issue:${issueId}`;
}
