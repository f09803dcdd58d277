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
   * One delivery per webhook for the event, due `firstDelayMs` from now. Deliveries that exist
   * already (the event was processed before) are left as they are. Resolves to how many are new.
   */
  async createForEvent(event: EventHeader, body: Buffer, traceContext: Record<string, string>, webhookIds: number[], firstDelayMs: number): Promise<number> {
    if (webhookIds.length === 0) return 0;
    const { rowCount } = await this.pool.query(
      `INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, trace_context, next_attempt_at, event_created_at)
       SELECT planned.id, $1, $2, $3, planned.webhook_id, $4, $5, now() + make_interval(secs => $6), $7::timestamptz
       FROM unnest($8::uuid[], $9::bigint[]) AS planned (id, webhook_id)
       ON CONFLICT (id) DO NOTHING`,
      [
        event.id,
        event.event,
        event.team_id,
        body,
        traceContext,
        firstDelayMs / 1000,
        event.created_at,
        webhookIds.map((webhookId) => deliveryId(event.id, webhookId)),
        webhookIds,
      ],
    );
    return rowCount ?? 0;
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
   * Claims up to `limit` due deliveries for one lease. Rows locked by another replica's claim are
   * skipped, and `busyWebhooks` (at their concurrency limit here) are left for later.
   */
  async claimDue(limit: number, busyWebhooks: number[], leaseMs: number): Promise<ClaimedDelivery[]> {
    const leaseToken = randomUUID();
    const { rows } = await this.pool.query<Omit<ClaimedDelivery, 'leaseToken'>>(
      `UPDATE deliveries AS d SET lease_token = $1, next_attempt_at = now() + make_interval(secs => $2)
       FROM (
         SELECT id FROM deliveries
         WHERE status = 'pending' AND next_attempt_at <= now() AND NOT (webhook_id = ANY($3::bigint[]))
         ORDER BY next_attempt_at
         LIMIT $4
         FOR UPDATE SKIP LOCKED
       ) AS due
       WHERE d.id = due.id
       RETURNING d.id, d.event_id AS "eventId", d.event, d.team_id AS "teamId", d.webhook_id AS "webhookId", d.body,
                 d.trace_context AS "traceContext", d.attempt_count AS "attemptCount",
                 (extract(epoch FROM d.event_created_at) * 1000)::float8 AS "eventCreatedAtMs",
                 d.redelivery_of IS NOT NULL AS "isRedelivery"`,
      [leaseToken, leaseMs / 1000, busyWebhooks, limit],
    );
    return rows.map((row) => ({ ...row, leaseToken }));
  }

  /**
   * Records an attempt and moves the delivery on, in one statement; a sender whose lease was taken
   * over records nothing. Resolves to false in that case.
   */
  async recordAttempt(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `WITH moved AS (
         UPDATE deliveries SET
           attempt_count = attempt_count + 1,
           status = $3,
           failure_reason = $4,
           next_attempt_at = CASE WHEN $3 = 'pending' THEN now() + make_interval(secs => $5) END,
           lease_token = NULL,
           updated_at = now(),
           completed_at = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END
         WHERE id = $1 AND lease_token = $2
         RETURNING id, attempt_count
       )
       INSERT INTO delivery_attempts (delivery_id, number, attempted_at, url, status_code, error, duration_ms, response_body)
       SELECT id, attempt_count, to_timestamp($6::float8 / 1000), $7, $8, $9, $10, $11 FROM moved`,
      [
        delivery.id,
        delivery.leaseToken,
        outcome.status,
        outcome.failureReason,
        (outcome.retryInMs ?? 0) / 1000,
        outcome.startedAtMs,
        outcome.url,
        outcome.statusCode,
        outcome.error,
        outcome.durationMs,
        outcome.responseBody,
      ],
    );
    return rowCount === 1;
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
