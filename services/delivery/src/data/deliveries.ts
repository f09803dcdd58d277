import { randomUUID } from 'node:crypto';
import { timestamp, type Pool } from '@worklane/db';
import type { DeliveryStatus, EventHeader, FailureReason } from '../domain/delivery';
import { deliveryId } from '../domain/delivery';

/** A delivery as the API shows it. */
export interface DeliveryRecord {
  id: string;
  webhook_id: number;
  event: string;
  event_id: string;
  status: DeliveryStatus;
  failure_reason: FailureReason | null;
  attempt_count: number;
  next_attempt_at: string | null;
  redelivery_of: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface AttemptRecord {
  number: number;
  attempted_at: string;
  url: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string | null;
}

export interface DeliveryDetail extends DeliveryRecord {
  payload: unknown;
  attempts: AttemptRecord[];
}

/** A delivery a sender has claimed and now owns until `leaseToken` is cleared or its lease runs out. */
export interface ClaimedDelivery {
  id: string;
  eventId: string;
  event: string;
  teamId: number;
  webhookId: number;
  body: Buffer;
  traceContext: Record<string, string> | null;
  attemptCount: number;
  eventCreatedAtMs: number;
  /** Redeliveries resend old events; their age says nothing about delivery lag. */
  isRedelivery: boolean;
  leaseToken: string;
}

/** The result of one attempt, and where it leaves the delivery. */
export interface AttemptOutcome {
  startedAtMs: number;
  url: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string | null;
  status: DeliveryStatus;
  failureReason: FailureReason | null;
  /** When `status` stays pending: milliseconds until the next attempt. */
  retryInMs: number | null;
}

const RECORD_COLUMNS = [
  'id',
  'webhook_id',
  'event',
  'event_id',
  'status',
  'failure_reason',
  'attempt_count',
  timestamp("CASE WHEN status = 'pending' THEN next_attempt_at END", 'next_attempt_at'),
  'redelivery_of',
  timestamp('created_at'),
  timestamp('updated_at'),
  timestamp('completed_at'),
].join(', ');

/** A position in a newest-first list: the last row of the previous page. */
export interface PageCursor {
  createdAt: string;
  id: string;
}

/** An event and the webhooks it goes to. */
export interface EventFanOut {
  event: EventHeader;
  body: Buffer;
  traceContext: Record<string, string>;
  webhookIds: number[];
  firstDelayMs: number;
}

export interface NewDelivery {
  eventId: string;
  event: string;
  teamId: number;
  webhookId: number;
  body: Buffer;
  traceContext: Record<string, string>;
  eventCreatedAt: string;
  redeliveryOf?: string;
}

export class DeliveryStore {
  constructor(private readonly pool: Pool) {}

  /**
   * One delivery per webhook for each event, due `firstDelayMs` from now, in one statement.
   * Deliveries that exist already (the event was processed before) are left as they are.
   * Resolves to how many deliveries are new, per event.
   */
  async createForEvents(events: EventFanOut[]): Promise<number[]> {
    const rows = events.flatMap((fanOut) => fanOut.webhookIds.map((webhookId) => ({ fanOut, webhookId })));
    if (rows.length === 0) return events.map(() => 0);
    const { rows: inserted } = await this.pool.query<{ event_id: string }>({
      name: 'deliveries-create-for-events',
      text: `INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, trace_context, next_attempt_at, event_created_at)
       SELECT planned.id, planned.event_id, planned.event, planned.team_id, planned.webhook_id, planned.body, planned.trace_context::jsonb,
              now() + make_interval(secs => planned.delay_seconds), planned.event_created_at
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bigint[], $5::bigint[], $6::bytea[], $7::text[], $8::float8[], $9::timestamptz[])
         AS planned (id, event_id, event, team_id, webhook_id, body, trace_context, delay_seconds, event_created_at)
       ON CONFLICT (id) DO NOTHING
       RETURNING event_id`,
      values: [
        rows.map(({ fanOut, webhookId }) => deliveryId(fanOut.event.id, webhookId)),
        rows.map(({ fanOut }) => fanOut.event.id),
        rows.map(({ fanOut }) => fanOut.event.event),
        rows.map(({ fanOut }) => fanOut.event.team_id),
        rows.map(({ webhookId }) => webhookId),
        rows.map(({ fanOut }) => fanOut.body),
        rows.map(({ fanOut }) => JSON.stringify(fanOut.traceContext)),
        rows.map(({ fanOut }) => fanOut.firstDelayMs / 1000),
        rows.map(({ fanOut }) => fanOut.event.created_at),
      ],
    });
    const counts = new Map<string, number>();
    for (const row of inserted) counts.set(row.event_id, (counts.get(row.event_id) ?? 0) + 1);
    return events.map((fanOut) => counts.get(fanOut.event.id.toLowerCase()) ?? 0);
  }

  /** A delivery outside the event fan-out (ping, redelivery), due at once. */
  async createOne(delivery: NewDelivery): Promise<DeliveryRecord> {
    const { rows } = await this.pool.query<DeliveryRecord>(
      `INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, trace_context, next_attempt_at, event_created_at, redelivery_of)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), $8::timestamptz, $9)
       RETURNING ${RECORD_COLUMNS}`,
      [
        randomUUID(),
        delivery.eventId,
        delivery.event,
        delivery.teamId,
        delivery.webhookId,
        delivery.body,
        delivery.traceContext,
        delivery.eventCreatedAt,
        delivery.redeliveryOf ?? null,
      ],
    );
    return rows[0] as DeliveryRecord;
  }

  /** The time now, as PostgreSQL formats every timestamp of the API. */
  async now(): Promise<string> {
    const { rows } = await this.pool.query<{ now: string }>(`SELECT ${timestamp('now()', 'now')}`);
    return (rows[0] as { now: string }).now;
  }

  /**
   * Claims up to `limit` due deliveries for one lease, at most `perWebhook` in flight per webhook
   * counting `inFlight` (the attempts this replica is already making). Rows locked by another
   * replica's claim are skipped, so replicas never claim the same delivery.
   */
  async claimDue(limit: number, perWebhook: number, inFlight: ReadonlyMap<number, number>, leaseMs: number): Promise<ClaimedDelivery[]> {
    const leaseToken = randomUUID();
    const busy = [...inFlight].filter(([, count]) => count >= perWebhook).map(([webhookId]) => webhookId);
    const partly = [...inFlight].filter(([, count]) => count < perWebhook);
    const { rows } = await this.pool.query<Omit<ClaimedDelivery, 'leaseToken'>>({
      name: 'deliveries-claim-due',
      text: `WITH candidates AS (
         SELECT id, webhook_id, next_attempt_at FROM deliveries
         WHERE status = 'pending' AND next_attempt_at <= now() AND NOT (webhook_id = ANY($3::bigint[]))
         ORDER BY next_attempt_at
         LIMIT $4
         FOR UPDATE SKIP LOCKED
       ), ranked AS (
         SELECT candidates.id,
                row_number() OVER (PARTITION BY candidates.webhook_id ORDER BY candidates.next_attempt_at) + coalesce(in_flight.count, 0) AS slot
         FROM candidates
         LEFT JOIN unnest($5::bigint[], $6::int[]) AS in_flight (webhook_id, count) USING (webhook_id)
       ), chosen AS (
         SELECT id FROM ranked WHERE slot <= $7
       )
       UPDATE deliveries AS d SET lease_token = $1, next_attempt_at = now() + make_interval(secs => $2)
       FROM chosen
       WHERE d.id = chosen.id
       RETURNING d.id, d.event_id AS "eventId", d.event, d.team_id AS "teamId", d.webhook_id AS "webhookId", d.body,
                 d.trace_context AS "traceContext", d.attempt_count AS "attemptCount",
                 (extract(epoch FROM d.event_created_at) * 1000)::float8 AS "eventCreatedAtMs",
                 d.redelivery_of IS NOT NULL AS "isRedelivery"`,
      values: [leaseToken, leaseMs / 1000, busy, limit, partly.map(([webhookId]) => webhookId), partly.map(([, count]) => count), perWebhook],
    });
    return rows.map((row) => ({ ...row, leaseToken }));
  }

  /**
   * Records attempts and moves their deliveries on, in one statement. An attempt whose sender lost
   * its lease (it ran past it and another sender took over) records nothing: false in its place.
   */
  async recordAttempts(attempts: { delivery: ClaimedDelivery; outcome: AttemptOutcome }[]): Promise<boolean[]> {
    if (attempts.length === 0) return [];
    const column = <T>(read: (attempt: { delivery: ClaimedDelivery; outcome: AttemptOutcome }) => T) => attempts.map(read);
    const { rows } = await this.pool.query<{ delivery_id: string }>({
      name: 'deliveries-record-attempts',
      text: `WITH outcome AS (
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::float8[], $6::float8[], $7::text[], $8::int[], $9::text[], $10::int[], $11::text[])
           AS o (id, lease_token, status, failure_reason, retry_seconds, started_ms, url, status_code, error, duration_ms, response_body)
       ), moved AS (
         UPDATE deliveries AS d SET
           attempt_count = d.attempt_count + 1,
           status = o.status,
           failure_reason = o.failure_reason,
           next_attempt_at = CASE WHEN o.status = 'pending' THEN now() + make_interval(secs => o.retry_seconds) END,
           lease_token = NULL,
           updated_at = now(),
           completed_at = CASE WHEN o.status = 'pending' THEN NULL ELSE now() END
         FROM outcome AS o
         WHERE d.id = o.id AND d.lease_token = o.lease_token
         RETURNING d.id, d.attempt_count
       )
       INSERT INTO delivery_attempts (delivery_id, number, attempted_at, url, status_code, error, duration_ms, response_body)
       SELECT moved.id, moved.attempt_count, to_timestamp(o.started_ms / 1000), o.url, o.status_code, o.error, o.duration_ms, o.response_body
       FROM moved JOIN outcome AS o ON o.id = moved.id
       RETURNING delivery_id`,
      values: [
        column(({ delivery }) => delivery.id),
        column(({ delivery }) => delivery.leaseToken),
        column(({ outcome }) => outcome.status),
        column(({ outcome }) => outcome.failureReason),
        column(({ outcome }) => (outcome.retryInMs ?? 0) / 1000),
        column(({ outcome }) => outcome.startedAtMs),
        column(({ outcome }) => outcome.url),
        column(({ outcome }) => outcome.statusCode),
        column(({ outcome }) => outcome.error),
        column(({ outcome }) => outcome.durationMs),
        column(({ outcome }) => outcome.responseBody),
      ],
    });
    const recorded = new Set(rows.map((row) => row.delivery_id));
    return attempts.map(({ delivery }) => recorded.has(delivery.id));
  }

  /** Ends a delivery without an attempt: its webhook is gone or inactive. */
  async abandon(delivery: ClaimedDelivery, reason: FailureReason): Promise<void> {
    await this.pool.query(
      `UPDATE deliveries SET status = 'failed', failure_reason = $3, lease_token = NULL, next_attempt_at = NULL,
         updated_at = now(), completed_at = now()
       WHERE id = $1 AND lease_token = $2`,
      [delivery.id, delivery.leaseToken, reason],
    );
  }

  /** Gives a claimed delivery back without counting an attempt (the webhook service did not answer). */
  async release(delivery: ClaimedDelivery, delayMs: number): Promise<void> {
    await this.pool.query(
      `UPDATE deliveries SET lease_token = NULL, next_attempt_at = now() + make_interval(secs => $3)
       WHERE id = $1 AND lease_token = $2`,
      [delivery.id, delivery.leaseToken, delayMs / 1000],
    );
  }

  /** Deletes up to `limit` deliveries (attempts included) finished more than `retentionMs` ago. */
  async deleteFinishedBefore(retentionMs: number, limit = 10_000): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM deliveries WHERE id IN (
         SELECT id FROM deliveries WHERE status <> 'pending' AND completed_at < now() - make_interval(secs => $1) LIMIT $2
       )`,
      [retentionMs / 1000, limit],
    );
    return rowCount ?? 0;
  }

  /** Newest first; the whole log, or a page of `limit` after `cursor`. */
  async listForWebhook(teamId: number, webhookId: number, page?: { limit: number; after?: PageCursor }): Promise<DeliveryRecord[]> {
    const params: unknown[] = [teamId, webhookId];
    let where = 'team_id = $1 AND webhook_id = $2';
    if (page?.after) {
      params.push(page.after.createdAt, page.after.id);
      where += ` AND (created_at, id) < ($3::timestamptz, $4::uuid)`;
    }
    let limit = '';
    if (page) {
      params.push(page.limit);
      limit = ` LIMIT $${params.length}`;
    }
    const { rows } = await this.pool.query<DeliveryRecord>(
      `SELECT ${RECORD_COLUMNS} FROM deliveries WHERE ${where} ORDER BY created_at DESC, id DESC${limit}`,
      params,
    );
    return rows;
  }

  async find(teamId: number, id: string): Promise<DeliveryRecord | undefined> {
    const { rows } = await this.pool.query<DeliveryRecord>(`SELECT ${RECORD_COLUMNS} FROM deliveries WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows[0];
  }

  /** The delivery with its payload and every attempt, oldest attempt first. */
  async findDetail(teamId: number, id: string): Promise<DeliveryDetail | undefined> {
    const { rows } = await this.pool.query<DeliveryRecord & { body: Buffer }>(
      `SELECT ${RECORD_COLUMNS}, body FROM deliveries WHERE team_id = $1 AND id = $2`,
      [teamId, id],
    );
    const row = rows[0];
    if (!row) return undefined;
    // Attempts are only ever appended, so reading them after the delivery row cannot miss one it counts.
    const attempts = await this.pool.query<AttemptRecord>(
      `SELECT number, ${timestamp('attempted_at')}, url, status_code, error, duration_ms, response_body
       FROM delivery_attempts WHERE delivery_id = $1 ORDER BY number`,
      [id],
    );
    const { body, ...record } = row;
    return { ...record, payload: JSON.parse(body.toString('utf8')), attempts: attempts.rows };
  }

  /** What a redelivery copies from the original. */
  async findForRedelivery(
    teamId: number,
    id: string,
  ): Promise<{ id: string; eventId: string; event: string; webhookId: number; body: Buffer; eventCreatedAt: string } | undefined> {
    const { rows } = await this.pool.query(
      `SELECT id, event_id AS "eventId", event, webhook_id AS "webhookId", body, ${timestamp('event_created_at', '"eventCreatedAt"')}
       FROM deliveries WHERE team_id = $1 AND id = $2`,
      [teamId, id],
    );
    return rows[0];
  }
}
