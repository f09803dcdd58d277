import { randomUUID } from 'node:crypto';
import { timestamp, withTransaction, type InSameTransaction, type Pool, type Queryable } from '@worklane/db';
import { type DeliveryStatus, type EventHeader, type FailureReason, deliveryId } from '../domain/delivery';
import type { ClaimBudget } from '../sending/budgets';

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
  recovery_id: number | null;
  /** The event's issue (null for pings and older deliveries). */
  issue_id: number | null;
  /** Attempted while an earlier event of its issue to the same webhook was still pending, after waiting its bound. */
  out_of_order: boolean;
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
  request_headers: Record<string, string> | null;
  response_headers: Record<string, string> | null;
}

export interface DeliveryDetail extends DeliveryRecord {
  payload: unknown;
  /** The exact bytes every attempt sends, as text. */
  request_body: string;
  attempts: AttemptRecord[];
}

/** What the delivery log can be narrowed to; the filters combine. */
export interface DeliveryLogFilter {
  status?: DeliveryStatus;
  event?: string;
  eventId?: string;
  issueId?: number;
  /** Created at or after. */
  createdAfter?: string;
  /** Created before. */
  createdBefore?: string;
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
  /** When the attempt was due (ms since the epoch), to measure how late it starts. */
  dueAtMs: number;
  /** Redeliveries resend old events; their age says nothing about delivery lag. */
  isRedelivery: boolean;
  leaseToken: string;
  /**
   * The rate limit (per second) whose buckets the claim spent for it; null or absent when the claim
   * knew of none (and for the fast path, which never takes a limited endpoint's delivery).
   */
  ratePerSecond?: number | null;
}

/** What one claim took, and when the next delivery a rate limit holds back is due. */
export interface ClaimResult {
  deliveries: ClaimedDelivery[];
  /** The soonest sending time a rate limit gave a pending delivery (ms since the epoch); null when none waits. */
  pacedDueAtMs: number | null;
}

/** The result of one attempt, and where it leaves the delivery. */
export interface AttemptOutcome {
  startedAtMs: number;
  url: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string | null;
  /** The headers sent, and those received (bounded, credentials redacted: see sending/exchange.ts). */
  requestHeaders?: Record<string, string> | null;
  responseHeaders?: Record<string, string> | null;
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
  'recovery_id',
  'issue_id',
  'out_of_order',
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
  /** The event's sequence number in the stream (the order it was published in); 0 when unknown. */
  streamSequence?: number;
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

/** How the deliveries of one issue to one webhook keep their order (docs/webhook-delivery-controls.md). */
export interface DeliveryOrdering {
  /**
   * How long a delivery waits for an earlier event of its issue to the same webhook that is still
   * pending, before it goes ahead without it; 0: deliveries never wait for each other.
   */
  orderWaitMs: number;
}

/** DELIVERY_ORDER_WAIT_MAX_MS's default. */
export const DEFAULT_ORDER_WAIT_MS = 600_000;

/**
 * Due deliveries of one rate-limited endpoint given sending times by one claim, at most: a backlog
 * larger than this is paced over a few claims, each statement staying small.
 */
const RATE_PACE_BATCH = 1_000;

/** Later events of one issue put off by one recorded retry, at most (the claim's check covers the rest). */
const REORDER_BATCH = 100;

export class DeliveryStore {
  constructor(
    private readonly pool: Pool,
    private readonly ordering: DeliveryOrdering = { orderWaitMs: DEFAULT_ORDER_WAIT_MS },
  ) {}

  /**
   * One delivery per webhook for each event, due `firstDelayMs` from now, in one statement, with
   * the event's issue and stream sequence (the order the issue's deliveries to a webhook keep).
   * Deliveries that exist already (the event was processed before) are left as they are.
   * Resolves to how many deliveries are new, per event. `db` is a transaction's client when the
   * deliveries are created with other changes (the fan-out backlog).
   */
  async createForEvents(events: EventFanOut[], db: Queryable = this.pool): Promise<number[]> {
    return (await this.insertFanOut(events, db)).created;
  }

  /**
   * Like createForEvents, and in the same statement the deliveries that may be attempted at once
   * are stored already claimed by the caller (the fast path: no claim query, no wait for one).
   * `atOnce` says, per event and webhook (in `webhookIds` order), which deliveries the caller has
   * a sending slot for; of those, a delivery is taken only when, as the statement finds the table:
   * - its endpoint has no due delivery waiting for a claim (the claim serves those first, oldest
   *   first), and
   * - no earlier event of its issue to the same webhook is pending, or is among `events` (per-issue
   *   order), unless deliveries of one issue never wait for each other.
   * The others are stored due as createForEvents stores them, for the claim. Each taken delivery
   * is leased for `leaseMs` as a claim leases it, so another replica takes it over if this one dies.
   *
   * The statement commits without waiting for PostgreSQL to flush its WAL to disk, so that the
   * attempts start while the flush would still run: the rows are visible to every session at
   * once, but a crash of PostgreSQL can lose them until the WAL is flushed. The caller therefore
   * keeps what it stored them for (the event's message on the bus) unacknowledged until
   * flushCommits resolves after this has returned.
   */
  async createForEventsSendingNow(events: EventFanOut[], atOnce: boolean[][], leaseMs: number): Promise<{ created: number[]; leased: ClaimedDelivery[] }> {
    return this.insertFanOut(events, this.pool, { atOnce, leaseMs });
  }

  /**
   * Resolves once the WAL is on disk up to a commit made now, and so past every commit that
   * returned before this call, those made without waiting for the flush among them (WAL is flushed
   * in order). The commit is of a transactional logical-decoding message: no table, no row, only
   * a WAL record, flushed as the session's synchronous_commit says (and replicated as it says).
   * Several callers at once share one (see DurableAcks).
   */
  async flushCommits(): Promise<void> {
    await this.pool.query({ name: 'deliveries-flush-commits', text: `SELECT pg_logical_emit_message(true, 'worklane.delivery.flush', '')` });
  }

  private async insertFanOut(events: EventFanOut[], db: Queryable, sendNow?: { atOnce: boolean[][]; leaseMs: number }): Promise<{ created: number[]; leased: ClaimedDelivery[] }> {
    // One row per delivery; the event's columns (its body above all) are sent once per event.
    const rowIds: string[] = [];
    const rowEvents: number[] = [];
    const rowWebhooks: number[] = [];
    const rowAtOnce: boolean[] = [];
    events.forEach((fanOut, index) => {
      fanOut.webhookIds.forEach((webhookId, position) => {
        rowIds.push(deliveryId(fanOut.event.id, webhookId));
        rowEvents.push(index + 1);
        rowWebhooks.push(webhookId);
        rowAtOnce.push(sendNow?.atOnce[index]?.[position] === true);
      });
    });
    if (rowIds.length === 0) return { created: events.map(() => 0), leased: [] };
    const anyAtOnce = rowAtOnce.includes(true);
    const leaseToken = anyAtOnce ? randomUUID() : null;
    const { rows: inserted } = await db.query<{ id: string; leased: boolean }>({
      name: 'deliveries-create-for-events',
      // $17: the fast path's statement commits without waiting for the WAL flush (SET LOCAL, for
      // this statement's own transaction only; createForEventsSendingNow says why that is safe).
      text: `WITH commit_mode AS (
         SELECT CASE WHEN $17::boolean THEN set_config('synchronous_commit', 'off', true) END AS setting
       ), planned AS (
         SELECT r.id, r.webhook_id, r.at_once, e.*
         FROM unnest($1::uuid[], $2::int[], $3::bigint[], $4::boolean[]) AS r (id, event_index, webhook_id, at_once)
         JOIN unnest($5::uuid[], $6::text[], $7::bigint[], $8::bytea[], $9::text[], $10::float8[], $11::timestamptz[], $12::bigint[], $13::bigint[])
           WITH ORDINALITY AS e (event_id, event, team_id, body, trace_context, delay_seconds, event_created_at, issue_id, stream_seq, event_index)
           USING (event_index)
       ), decided AS (
         SELECT p.*,
                CASE WHEN p.at_once THEN
                  -- OFFSET 0: one index probe per delivery, never a hash of every due delivery
                  -- (which a generic plan of this statement, counting on ten rows per array, would
                  -- otherwise choose).
                  NOT EXISTS (SELECT 1 FROM deliveries AS w WHERE w.webhook_id = p.webhook_id AND w.status = 'pending' AND w.next_attempt_at <= now() OFFSET 0)
                  AND ($16::float8 <= 0 OR p.issue_id IS NULL OR p.stream_seq = 0 OR (NOT EXISTS (
                    SELECT 1 FROM deliveries AS e
                    WHERE e.webhook_id = p.webhook_id AND e.issue_id = p.issue_id AND e.status = 'pending' AND e.stream_seq < p.stream_seq)
                    -- An earlier event of the issue in this same statement is not in the table yet.
                    AND NOT EXISTS (
                    SELECT 1 FROM planned AS q
                    WHERE q.webhook_id = p.webhook_id AND q.issue_id = p.issue_id AND q.stream_seq > 0 AND q.stream_seq < p.stream_seq)))
                ELSE false END AS go_now
         FROM planned AS p
       )
       INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, trace_context, next_attempt_at, lease_token, event_created_at, issue_id, stream_seq)
       SELECT d.id, d.event_id, d.event, d.team_id, d.webhook_id, d.body, d.trace_context::jsonb,
              CASE WHEN d.go_now THEN now() + make_interval(secs => $15::float8) ELSE now() + make_interval(secs => d.delay_seconds) END,
              CASE WHEN d.go_now THEN $14::uuid END,
              d.event_created_at, d.issue_id, nullif(d.stream_seq, 0)
       FROM decided AS d, commit_mode
       ON CONFLICT (id) DO NOTHING
       RETURNING id, lease_token IS NOT NULL AS leased`,
      values: [
        rowIds,
        rowEvents,
        rowWebhooks,
        rowAtOnce,
        events.map((fanOut) => fanOut.event.id),
        events.map((fanOut) => fanOut.event.event),
        events.map((fanOut) => fanOut.event.team_id),
        events.map((fanOut) => fanOut.body),
        events.map((fanOut) => JSON.stringify(fanOut.traceContext)),
        events.map((fanOut) => fanOut.firstDelayMs / 1000),
        events.map((fanOut) => fanOut.event.created_at),
        events.map((fanOut) => fanOut.event.issue_id ?? null),
        events.map((fanOut) => fanOut.streamSequence ?? 0),
        leaseToken,
        (sendNow?.leaseMs ?? 0) / 1000,
        this.ordering.orderWaitMs / 1000,
        sendNow !== undefined,
      ],
    });
    const created = events.map(() => 0);
    const leased: ClaimedDelivery[] = [];
    const dueAtMs = Date.now();
    const positions = new Map(rowIds.map((id, position) => [id, position]));
    for (const row of inserted) {
      const position = positions.get(row.id);
      if (position === undefined) continue;
      const index = rowEvents[position]! - 1;
      created[index] = (created[index] ?? 0) + 1;
      if (!row.leased || leaseToken === null) continue;
      const fanOut = events[index]!;
      const webhookId = rowWebhooks[position]!;
      leased.push({
        id: row.id,
        eventId: fanOut.event.id,
        event: fanOut.event.event,
        teamId: fanOut.event.team_id,
        webhookId,
        body: fanOut.body,
        traceContext: fanOut.traceContext,
        attemptCount: 0,
        eventCreatedAtMs: Date.parse(fanOut.event.created_at),
        dueAtMs,
        isRedelivery: false,
        leaseToken,
      });
    }
    return { created, leased };
  }

  /**
   * A delivery outside the event fan-out (ping, redelivery), due at once. `recordIn` (the record
   * of an idempotent request's answer) joins it in a transaction when given.
   */
  async createOne(delivery: NewDelivery, recordIn?: InSameTransaction<DeliveryRecord>): Promise<DeliveryRecord> {
    if (!recordIn) return this.insertOne(this.pool, delivery);
    return withTransaction(this.pool, async (client) => {
      const created = await this.insertOne(client, delivery);
      await recordIn(client, created);
      return created;
    });
  }

  private async insertOne(db: Queryable, delivery: NewDelivery): Promise<DeliveryRecord> {
    const { rows } = await db.query<DeliveryRecord>(
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
   * Claims due deliveries for one lease, fairly: teams take turns (each team's first delivery,
   * then each team's second...), and inside a team its endpoints take turns, within the budgets of
   * `budget` (what each team and endpoint may still start, who may start nothing). Teams are found
   * by a skip scan of the pending index, so one team's backlog is never read to find another
   * team's due delivery. Rows locked by another replica's claim are skipped, so replicas never
   * claim the same delivery. `rotateAfter` starts the turn after that team when more teams are
   * due than one claim serves.
   *
   * Two rules of the endpoint hold here too, for every replica at once (docs/webhook-delivery-controls.md):
   * - Per-issue order: a delivery of an issue event is not claimed while an earlier event of the
   *   same issue (lower stream sequence) to the same webhook is pending, until it has waited
   *   `orderWaitMs`; it then goes ahead and is marked `out_of_order`.
   * - Rate limits: an endpoint with a limit starts at most what its bucket of attempts
   *   (endpoint_rate_limits.started_tokens, locked by this claim) holds, whether a delivery was
   *   given a sending time or not, so however late a claim comes the attempts it starts keep to
   *   the bucket. Its due deliveries without a sending time also need one from the booking bucket
   *   (`tokens`); those beyond it are given the next free sending times (`rate_paced`), at most
   *   RATE_PACE_BATCH per endpoint and claim, and book their tokens ahead; they wait in the table,
   *   due later, holding no sending slot and out of the way of other endpoints' deliveries. A
   *   bucket another replica's claim holds right now makes its endpoint wait for the next claim.
   *   Each delivery says the limit it was claimed under (`ratePerSecond`), so that the sender can
   *   tell a claim made before a new limit was stored.
   */
  async claimDue(budget: ClaimBudget, leaseMs: number, rotateAfter = 0): Promise<ClaimResult> {
    if (budget.limit <= 0) return { deliveries: [], pacedDueAtMs: null };
    const leaseToken = randomUUID();
    const { rows } = await this.pool.query<Omit<ClaimedDelivery, 'leaseToken' | 'id'> & { id: string | null; pacedDueAtMs: number | null }>({
      name: 'deliveries-claim-due-fair',
      text: `WITH RECURSIVE pending_teams (team_id) AS (
         (SELECT team_id FROM deliveries WHERE status = 'pending' AND next_attempt_at IS NOT NULL ORDER BY team_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.team_id FROM deliveries AS d WHERE d.status = 'pending' AND d.next_attempt_at IS NOT NULL AND d.team_id > p.team_id ORDER BY d.team_id LIMIT 1)
         FROM pending_teams AS p WHERE p.team_id IS NOT NULL
       ), due_teams AS (
         SELECT p.team_id, least(coalesce(allowed.left_over, $3), $2) AS allowance
         FROM pending_teams AS p
         LEFT JOIN unnest($5::bigint[], $6::int[]) AS allowed (team_id, left_over) USING (team_id)
         WHERE p.team_id IS NOT NULL
           AND NOT (p.team_id = ANY($4::bigint[]))
           AND (SELECT min(d.next_attempt_at) FROM deliveries AS d WHERE d.status = 'pending' AND d.next_attempt_at IS NOT NULL AND d.team_id = p.team_id) <= now()
         ORDER BY p.team_id <= $11, p.team_id
         LIMIT $2
       ), limited AS (
         SELECT r.webhook_id FROM endpoint_rate_limits AS r WHERE r.team_id IN (SELECT team_id FROM due_teams)
       ), buckets AS (
         SELECT r.webhook_id, r.per_second,
                least(r.per_second::float8, r.tokens + extract(epoch FROM now() - r.refilled_at)::float8 * r.per_second) AS tokens,
                least(r.per_second::float8, r.started_tokens + extract(epoch FROM now() - r.started_at)::float8 * r.per_second) AS started_tokens
         FROM endpoint_rate_limits AS r
         WHERE r.team_id IN (SELECT team_id FROM due_teams)
         FOR UPDATE SKIP LOCKED
       ), rate_held AS (
         -- Limited endpoints that may start nothing now (everything: their bucket is held by another
         -- claim, or has no attempt left to start), or only deliveries that have a sending time already.
         SELECT l.webhook_id, (b.webhook_id IS NULL OR b.started_tokens < 1) AS everything
         FROM limited AS l LEFT JOIN buckets AS b USING (webhook_id)
         WHERE b.webhook_id IS NULL OR b.started_tokens < 1 OR b.tokens < 1
       ), candidates AS (
         SELECT c.* FROM due_teams AS t CROSS JOIN LATERAL (
           SELECT d.id, d.team_id, d.webhook_id, d.next_attempt_at, d.rate_paced,
                  CASE WHEN $13::float8 > 0 AND d.stream_seq IS NOT NULL AND d.created_at <= now() - make_interval(secs => $13::float8)
                       THEN EXISTS (SELECT 1 FROM deliveries AS e
                                    WHERE e.webhook_id = d.webhook_id AND e.issue_id = d.issue_id AND e.status = 'pending' AND e.stream_seq < d.stream_seq)
                       ELSE false END AS went_ahead
           FROM deliveries AS d
           WHERE d.team_id = t.team_id AND d.status = 'pending' AND d.next_attempt_at <= now()
             AND NOT (d.webhook_id = ANY($7::bigint[]))
             AND NOT EXISTS (SELECT 1 FROM rate_held AS h WHERE h.webhook_id = d.webhook_id AND (h.everything OR NOT d.rate_paced))
             AND ($13::float8 <= 0 OR d.stream_seq IS NULL OR d.created_at <= now() - make_interval(secs => $13::float8)
                  OR NOT EXISTS (SELECT 1 FROM deliveries AS e
                                 WHERE e.webhook_id = d.webhook_id AND e.issue_id = d.issue_id AND e.status = 'pending' AND e.stream_seq < d.stream_seq))
           ORDER BY d.next_attempt_at
           LIMIT t.allowance
           FOR UPDATE OF d SKIP LOCKED
         ) AS c
       ), fitting AS (
         SELECT c.id, c.team_id, c.webhook_id, c.next_attempt_at, c.rate_paced, c.went_ahead,
                row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.next_attempt_at) AS webhook_turn,
                coalesce(allowed.left_over, $10) AS webhook_allowance,
                row_number() OVER (PARTITION BY c.webhook_id, c.rate_paced ORDER BY c.next_attempt_at) AS rate_turn,
                floor(b.tokens) AS rate_allowance,
                row_number() OVER (PARTITION BY c.webhook_id ORDER BY c.rate_paced DESC, c.next_attempt_at) AS start_turn,
                floor(b.started_tokens) AS start_allowance
         FROM candidates AS c
         LEFT JOIN unnest($8::bigint[], $9::int[]) AS allowed (webhook_id, left_over) USING (webhook_id)
         LEFT JOIN buckets AS b USING (webhook_id)
       ), turns AS (
         SELECT f.id, f.team_id, f.webhook_id, f.next_attempt_at, f.rate_paced, f.went_ahead,
                row_number() OVER (PARTITION BY f.team_id ORDER BY f.webhook_turn, f.next_attempt_at) AS team_turn
         FROM fitting AS f
         WHERE f.webhook_turn <= f.webhook_allowance
           AND (f.start_allowance IS NULL OR (f.start_turn <= f.start_allowance AND (f.rate_paced OR f.rate_turn <= f.rate_allowance)))
       ), chosen AS (
         SELECT turns.id, turns.webhook_id, turns.rate_paced, turns.went_ahead, turns.next_attempt_at AS due_at FROM turns JOIN due_teams USING (team_id)
         WHERE turns.team_turn <= due_teams.allowance
         ORDER BY turns.team_turn, turns.next_attempt_at
         LIMIT $2
       ), spent AS (
         SELECT b.webhook_id, b.per_second, b.tokens - used.count AS tokens, used.count AS used,
                b.started_tokens - used.started AS started_tokens, used.started
         FROM buckets AS b
         CROSS JOIN LATERAL (
           SELECT count(*) FILTER (WHERE NOT chosen.rate_paced) AS count, count(*) AS started FROM chosen WHERE chosen.webhook_id = b.webhook_id
         ) AS used
       ), to_pace AS (
         SELECT w.id, s.webhook_id, now() + make_interval(secs => (w.turn - s.tokens) / s.per_second) AS due_at
         FROM spent AS s CROSS JOIN LATERAL (
           SELECT d.id, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS turn FROM (
             SELECT d.id, d.next_attempt_at FROM deliveries AS d
             WHERE d.webhook_id = s.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= now() AND NOT d.rate_paced
               AND NOT EXISTS (SELECT 1 FROM chosen WHERE chosen.id = d.id)
             ORDER BY d.next_attempt_at
             LIMIT $14
             FOR UPDATE OF d SKIP LOCKED
           ) AS d
         ) AS w
         WHERE s.tokens < 1
       ), paced AS (
         UPDATE deliveries AS d SET next_attempt_at = to_pace.due_at, rate_paced = true
         FROM to_pace WHERE d.id = to_pace.id
         RETURNING d.id
       ), refilled AS (
         -- Only buckets that were spent from: an untouched bucket refills by the same formula later.
         UPDATE endpoint_rate_limits AS r SET tokens = s.tokens - paced_count.count, refilled_at = now(),
                                              started_tokens = s.started_tokens, started_at = now()
         FROM spent AS s
         CROSS JOIN LATERAL (SELECT count(*) AS count FROM to_pace WHERE to_pace.webhook_id = s.webhook_id) AS paced_count
         WHERE r.webhook_id = s.webhook_id AND (s.started > 0 OR paced_count.count > 0)
         RETURNING r.webhook_id
       ), claimed AS (
         UPDATE deliveries AS d SET lease_token = $1, next_attempt_at = now() + make_interval(secs => $12),
                                    out_of_order = d.out_of_order OR chosen.went_ahead, rate_paced = false
         FROM chosen
         WHERE d.id = chosen.id
         RETURNING d.id, d.event_id AS "eventId", d.event, d.team_id AS "teamId", d.webhook_id AS "webhookId", d.body,
                   d.trace_context AS "traceContext", d.attempt_count AS "attemptCount",
                   (extract(epoch FROM d.event_created_at) * 1000)::float8 AS "eventCreatedAtMs",
                   (extract(epoch FROM chosen.due_at) * 1000)::float8 AS "dueAtMs",
                   d.redelivery_of IS NOT NULL AS "isRedelivery",
                   (SELECT b.per_second FROM buckets AS b WHERE b.webhook_id = d.webhook_id) AS "ratePerSecond"
       ), next_paced AS (
         -- The soonest sending time a rate limit gave a delivery (before or by this claim), or when a
         -- bucket of attempts this claim found short has room for one again.
         SELECT least(
           (SELECT min(d.next_attempt_at) FROM deliveries AS d WHERE d.status = 'pending' AND d.rate_paced AND d.next_attempt_at > now() AND d.lease_token IS NULL),
           (SELECT min(to_pace.due_at) FROM to_pace),
           (SELECT min(now() + make_interval(secs => (1 - s.started_tokens) / s.per_second)) FROM spent AS s WHERE s.started_tokens < 1)
         ) AS at
       )
       SELECT claimed.*, (extract(epoch FROM next_paced.at) * 1000)::float8 AS "pacedDueAtMs"
       FROM next_paced LEFT JOIN claimed ON true`,
      values: [
        leaseToken,
        budget.limit,
        budget.perTeam,
        budget.blockedTeams,
        budget.teamAllowances.map(([teamId]) => teamId),
        budget.teamAllowances.map(([, left]) => left),
        budget.blockedWebhooks,
        budget.webhookAllowances.map(([webhookId]) => webhookId),
        budget.webhookAllowances.map(([, left]) => left),
        budget.perWebhook,
        rotateAfter,
        leaseMs / 1000,
        this.ordering.orderWaitMs / 1000,
        RATE_PACE_BATCH,
      ],
    });
    // One row even when nothing was claimed, for the paced time; claimed rows come in no particular order.
    const pacedDueAtMs = rows[0]?.pacedDueAtMs ?? null;
    const deliveries = rows.flatMap(({ pacedDueAtMs: _paced, id, ...row }) => (id === null ? [] : [{ ...row, id, leaseToken }]));
    return { deliveries, pacedDueAtMs };
  }

  /**
   * Moves at most `limit` pending deliveries of endpoints whose breaker is open to when their
   * breaker lets a probe through, each endpoint's soonest due first, so the log shows when each
   * will really be tried (no attempt is counted) and the claim query does not read them meanwhile.
   * Deliveries being attempted right now, or locked by a claim, are left alone. Sending times a
   * rate limit gave them are forgotten: they are paced again once due. Resolves to how many moved:
   * fewer than `limit` when nothing more was left to move.
   *
   * Bounded because an endpoint that failed for a while may have thousands of deliveries waiting:
   * one statement for all of them would keep the database writing for a long moment, and every
   * team's commits with it (DeliverySender.deferOpenEndpoints paces the batches).
   */
  async deferUntil(endpoints: { webhookId: number; untilMs: number }[], limit: number): Promise<number> {
    if (endpoints.length === 0 || limit <= 0) return 0;
    const { rowCount } = await this.pool.query({
      name: 'deliveries-defer-endpoints',
      text: `WITH batch AS (
         SELECT b.id, e.until_ms
         FROM unnest($1::bigint[], $2::float8[]) AS e (webhook_id, until_ms) CROSS JOIN LATERAL (
           SELECT d.id FROM deliveries AS d
           WHERE d.webhook_id = e.webhook_id AND d.status = 'pending' AND d.next_attempt_at IS NOT NULL
             AND d.next_attempt_at < to_timestamp(e.until_ms / 1000)
             AND (d.lease_token IS NULL OR d.next_attempt_at <= now())
           ORDER BY d.next_attempt_at
           LIMIT $3
           FOR UPDATE OF d SKIP LOCKED
         ) AS b
         LIMIT $3
       )
       UPDATE deliveries AS d SET next_attempt_at = to_timestamp(batch.until_ms / 1000), rate_paced = false
       FROM batch WHERE d.id = batch.id`,
      values: [endpoints.map((endpoint) => endpoint.webhookId), endpoints.map((endpoint) => endpoint.untilMs), limit],
    });
    return rowCount ?? 0;
  }

  /**
   * CTEs for recordAttempts that keep the per-issue order cheap to claim: the later events of each
   * recorded delivery's issue to the same webhook (read from CTE `recorded`, with its new status
   * and time). When the delivery finished, the next event need not wait any more: due now, if it
   * was waiting for its first attempt. When it will be retried, the later events that would be due
   * before that retry are put off until the retry or the end of their wait, whichever is first, so
   * that claims do not read them over and over meanwhile. Rows locked elsewhere are left alone: the
   * claim's own check keeps the order whatever happens here.
   */
  private reorderBehind(recorded: string, waitParam: string): string {
    const wait = `make_interval(secs => ${waitParam}::float8)`;
    // next_of_issue: for each delivery that finished, the next event of its issue still pending for the webhook.
    return `, next_of_issue AS (
         SELECT s.id, s.attempt_count, s.next_attempt_at, s.lease_token
         FROM ${recorded} AS m CROSS JOIN LATERAL (
           SELECT s.id, s.attempt_count, s.next_attempt_at, s.lease_token FROM deliveries AS s
           WHERE s.webhook_id = m.webhook_id AND s.issue_id = m.issue_id AND s.status = 'pending' AND s.stream_seq > m.stream_seq
           ORDER BY s.stream_seq LIMIT 1
         ) AS s
         WHERE ${waitParam}::float8 > 0 AND m.status <> 'pending' AND m.stream_seq IS NOT NULL
       ), behind AS (
         SELECT DISTINCT ON (later.id) later.id, later.due_at FROM (
           SELECT n.id, now() AS due_at FROM next_of_issue AS n WHERE n.attempt_count = 0 AND n.next_attempt_at > now()
           UNION ALL
           SELECT s.id, least(m.next_attempt_at, s.created_at + ${wait}) AS due_at
           FROM ${recorded} AS m CROSS JOIN LATERAL (
             SELECT s.id, s.created_at, s.next_attempt_at FROM deliveries AS s
             WHERE s.webhook_id = m.webhook_id AND s.issue_id = m.issue_id AND s.status = 'pending' AND s.stream_seq > m.stream_seq
             ORDER BY s.stream_seq LIMIT ${REORDER_BATCH}
           ) AS s
           WHERE ${waitParam}::float8 > 0 AND m.status = 'pending' AND m.stream_seq IS NOT NULL AND s.next_attempt_at < least(m.next_attempt_at, s.created_at + ${wait})
         ) AS later
         WHERE NOT EXISTS (SELECT 1 FROM outcome AS o WHERE o.id = later.id)
         ORDER BY later.id, later.due_at DESC
       ), behind_locked AS (
         SELECT d.id FROM deliveries AS d JOIN behind USING (id) FOR UPDATE OF d SKIP LOCKED
       ), reordered AS (
         UPDATE deliveries AS d SET next_attempt_at = behind.due_at
         FROM behind JOIN behind_locked USING (id)
         WHERE d.id = behind.id AND d.status = 'pending' AND d.lease_token IS NULL
         RETURNING d.id
       )`;
  }

  /**
   * Records attempts and moves their deliveries on, in one statement. An attempt whose sender lost
   * its lease (it ran past it and another sender took over) records nothing: false in its place.
   */
  async recordAttempts(attempts: { delivery: ClaimedDelivery; outcome: AttemptOutcome }[]): Promise<boolean[]> {
    return (await this.recordAttemptsAndFollow(attempts)).recorded;
  }

  /**
   * recordAttempts, also saying how many later events of the recorded deliveries' issues may now be
   * claimed because the earlier event they waited for finished (a sender should claim at once).
   */
  async recordAttemptsAndFollow(attempts: { delivery: ClaimedDelivery; outcome: AttemptOutcome }[]): Promise<{ recorded: boolean[]; nextOfIssueDue: number }> {
    if (attempts.length === 0) return { recorded: [], nextOfIssueDue: 0 };
    const column = <T>(read: (attempt: { delivery: ClaimedDelivery; outcome: AttemptOutcome }) => T) => attempts.map(read);
    const { rows } = await this.pool.query<{ delivery_id: string; next_due: number }>({
      name: 'deliveries-record-attempts',
      text: `WITH outcome AS (
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::float8[], $6::float8[], $7::text[], $8::int[], $9::text[], $10::int[], $11::text[], $12::jsonb[], $13::jsonb[])
           AS o (id, lease_token, status, failure_reason, retry_seconds, started_ms, url, status_code, error, duration_ms, response_body, request_headers, response_headers)
       ), moved AS (
         UPDATE deliveries AS d SET
           attempt_count = d.attempt_count + 1,
           status = o.status,
           failure_reason = o.failure_reason,
           next_attempt_at = CASE WHEN o.status = 'pending' THEN now() + make_interval(secs => o.retry_seconds) END,
           lease_token = NULL,
           rate_paced = false,
           updated_at = now(),
           completed_at = CASE WHEN o.status = 'pending' THEN NULL ELSE now() END
         FROM outcome AS o
         WHERE d.id = o.id AND d.lease_token = o.lease_token
         RETURNING d.id, d.attempt_count, d.status, d.webhook_id, d.issue_id, d.stream_seq, d.next_attempt_at
       )${this.reorderBehind('moved', '$14')}
       INSERT INTO delivery_attempts (delivery_id, number, attempted_at, url, status_code, error, duration_ms, response_body, request_headers, response_headers)
       SELECT moved.id, moved.attempt_count, to_timestamp(o.started_ms / 1000), o.url, o.status_code, o.error, o.duration_ms, o.response_body, o.request_headers, o.response_headers
       FROM moved JOIN outcome AS o ON o.id = moved.id
       RETURNING delivery_id,
                 (SELECT count(*) FROM next_of_issue AS n WHERE n.lease_token IS NULL AND (n.attempt_count = 0 OR n.next_attempt_at <= now()))::int AS next_due`,
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
        column(({ outcome }) => (outcome.requestHeaders ? JSON.stringify(outcome.requestHeaders) : null)),
        column(({ outcome }) => (outcome.responseHeaders ? JSON.stringify(outcome.responseHeaders) : null)),
        this.ordering.orderWaitMs / 1000,
      ],
    });
    const recorded = new Set(rows.map((row) => row.delivery_id));
    return { recorded: attempts.map(({ delivery }) => recorded.has(delivery.id)), nextOfIssueDue: rows[0]?.next_due ?? 0 };
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
      `UPDATE deliveries SET lease_token = NULL, rate_paced = false, next_attempt_at = now() + make_interval(secs => $3)
       WHERE id = $1 AND lease_token = $2`,
      [delivery.id, delivery.leaseToken, delayMs / 1000],
    );
  }

  /**
   * Newest first; the whole log, or a page of `limit` after `cursor`, narrowed by `filter`. Every
   * filter keeps the (created_at, id) order, so paging works the same with any of them; an event
   * id is found through its own index, failed deliveries through theirs.
   */
  async listForWebhook(teamId: number, webhookId: number, page?: { limit: number; after?: PageCursor }, filter: DeliveryLogFilter = {}): Promise<DeliveryRecord[]> {
    const params: unknown[] = [teamId, webhookId];
    let where = 'team_id = $1 AND webhook_id = $2';
    const condition = (sql: (placeholder: string) => string, value: unknown) => {
      params.push(value);
      where += ` AND ${sql(`$${params.length}`)}`;
    };
    if (filter.status) condition((p) => `status = ${p}`, filter.status);
    if (filter.event) condition((p) => `event = ${p}`, filter.event);
    if (filter.eventId) condition((p) => `event_id = ${p}::uuid`, filter.eventId);
    if (filter.issueId !== undefined) condition((p) => `issue_id = ${p}::bigint`, filter.issueId);
    if (filter.createdAfter) condition((p) => `created_at >= ${p}::timestamptz`, filter.createdAfter);
    if (filter.createdBefore) condition((p) => `created_at < ${p}::timestamptz`, filter.createdBefore);
    if (page?.after) {
      params.push(page.after.createdAt, page.after.id);
      where += ` AND (created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
    }
    let limit = '';
    if (page) {
      params.push(page.limit);
      limit = ` LIMIT $${params.length}`;
    }
    const { rows } = await this.pool.query<DeliveryRecord>(`SELECT ${RECORD_COLUMNS} FROM deliveries WHERE ${where} ORDER BY created_at DESC, id DESC${limit}`, params);
    return rows;
  }

  async find(teamId: number, id: string): Promise<DeliveryRecord | undefined> {
    const { rows } = await this.pool.query<DeliveryRecord>(`SELECT ${RECORD_COLUMNS} FROM deliveries WHERE team_id = $1 AND id = $2`, [teamId, id]);
    return rows[0];
  }

  /** The delivery with its payload and every attempt, oldest attempt first. */
  async findDetail(teamId: number, id: string): Promise<DeliveryDetail | undefined> {
    const { rows } = await this.pool.query<DeliveryRecord & { body: Buffer }>(`SELECT ${RECORD_COLUMNS}, body FROM deliveries WHERE team_id = $1 AND id = $2`, [teamId, id]);
    const row = rows[0];
    if (!row) return undefined;
    // Attempts are only ever appended, so reading them after the delivery row cannot miss one it counts.
    const attempts = await this.pool.query<AttemptRecord>(
      `SELECT number, ${timestamp('attempted_at')}, url, status_code, error, duration_ms, response_body, request_headers, response_headers
       FROM delivery_attempts WHERE delivery_id = $1 ORDER BY number`,
      [id],
    );
    const { body, ...record } = row;
    const text = body.toString('utf8');
    return { ...record, payload: JSON.parse(text), request_body: text, attempts: attempts.rows };
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
