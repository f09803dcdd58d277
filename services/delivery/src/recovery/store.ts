import { isUniqueViolation, timestamp, withTransaction, type InSameTransaction, type Pool, type Queryable } from '@worklane/db';

export type RecoveryStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** A recovery job as the API shows it. */
export interface RecoveryRecord {
  id: number;
  webhook_id: number;
  status: RecoveryStatus;
  since: string;
  until: string;
  pace_per_second: number;
  found: number;
  queued: number;
  skipped: number;
  done: number;
  delivered: number;
  failed: number;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

export interface RecoveryRequest {
  teamId: number;
  webhookId: number;
  /** RFC 3339, as the client wrote it. */
  since: string;
  /** RFC 3339; undefined means now. */
  until: string | undefined;
  pacePerSecond: number;
  /** More failed events than this in the window: refused. */
  maxEvents: number;
}

export type RecoveryCreation =
  | { outcome: 'created' | 'existing'; recovery: RecoveryRecord }
  /** Another window's job is queued or running for the webhook. */
  | { outcome: 'busy'; recovery: RecoveryRecord }
  | { outcome: 'too_large'; maxEvents: number }
  /** `since` is not before the end of the window (`until`, or now). */
  | { outcome: 'empty_window' };

/** A job whose next step is due. */
export interface DueRecovery {
  id: number;
  teamId: number;
  webhookId: number;
}

/** What one step did. */
export interface RecoveryStep {
  queued: number;
  skipped: number;
  finished: boolean;
}

const RECORD_COLUMNS = [
  'r.id',
  'r.webhook_id',
  'r.status',
  timestamp('r.since'),
  timestamp('r.until'),
  'r.pace_per_second',
  'r.found',
  'r.queued',
  'r.skipped',
  'r.error',
  timestamp('r.created_at'),
  timestamp('r.started_at'),
  timestamp('r.finished_at'),
  timestamp('r.updated_at'),
].join(', ');

/** The job with how its re-sends went, counted from the deliveries it made. */
const SELECT_RECORD = `SELECT ${RECORD_COLUMNS}, progress.done, progress.delivered, progress.failed
  FROM delivery_recoveries AS r
  CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE d.status <> 'pending')::int AS done,
           count(*) FILTER (WHERE d.status = 'succeeded')::int AS delivered,
           count(*) FILTER (WHERE d.status = 'failed')::int AS failed
    FROM deliveries AS d WHERE d.recovery_id = r.id
  ) AS progress`;

/**
 * The failed deliveries a job goes through: in its webhook's log, created in [since, until),
 * failed by the time the job was created, not dead-lettered (nothing was ever published), and the
 * first such delivery of its event in the window, so that each event counts and is re-sent once.
 * `$job` is a row with team_id, webhook_id, since, until and created_at.
 */
const failedInWindow = (job: string) => `
  d.team_id = ${job}.team_id AND d.webhook_id = ${job}.webhook_id AND d.status = 'failed'
  AND d.created_at >= ${job}.since AND d.created_at < ${job}.until AND d.completed_at <= ${job}.created_at
  AND d.failure_reason IS DISTINCT FROM 'dead_lettered'
  AND NOT EXISTS (
    SELECT 1 FROM deliveries AS e
    WHERE e.webhook_id = d.webhook_id AND e.event_id = d.event_id AND e.status = 'failed'
      AND e.created_at >= ${job}.since AND (e.created_at, e.id) < (d.created_at, d.id) AND e.completed_at <= ${job}.created_at
      AND e.failure_reason IS DISTINCT FROM 'dead_lettered'
  )`;

/**
 * Recovery jobs (migration 009): created by the API within the bounds, then run step by step by
 * the RecoveryWorker of any replica. A step is one transaction that locks the job's row (a
 * replica finding it locked leaves it to the one holding it), re-sends the next events and moves
 * the job's position on, so a crash only rolls back a step.
 */
export class RecoveryStore {
  constructor(private readonly pool: Pool) {}

  /**
   * A new job, or the job already queued or running for the same window of the webhook; `busy`
   * when one for another window is. The failed events of the window are counted first (at most
   * `maxEvents + 1` of them are read) and a larger window is refused. `recordIn` (an idempotent
   * request's answer) joins the transaction.
   */
  async create(request: RecoveryRequest, recordIn?: InSameTransaction<RecoveryRecord>): Promise<RecoveryCreation> {
    try {
      return await withTransaction(this.pool, (client) => this.createIn(client, request, recordIn));
    } catch (error) {
      // Another request created a job for this webhook at the same moment: answer as if it came first.
      if (!isUniqueViolation(error)) throw error;
      return withTransaction(this.pool, (client) => this.createIn(client, request, recordIn));
    }
  }

  private async createIn(client: Queryable, request: RecoveryRequest, recordIn?: InSameTransaction<RecoveryRecord>): Promise<RecoveryCreation> {
    const { teamId, webhookId, since } = request;
    const until = request.until ?? null;
    const active = await client.query<{ id: number; same_window: boolean }>(
      `SELECT id, since = $3::timestamptz AND requested_until IS NOT DISTINCT FROM $4::timestamptz AS same_window
       FROM delivery_recoveries WHERE webhook_id = $1 AND team_id = $2 AND status IN ('queued', 'running') FOR UPDATE`,
      [webhookId, teamId, since, until],
    );
    const running = active.rows[0];
    if (running) {
      const recovery = (await this.findIn(client, teamId, webhookId, running.id))!;
      if (!running.same_window) return { outcome: 'busy', recovery };
      await recordIn?.(client, recovery);
      return { outcome: 'existing', recovery };
    }
    // The window ends at `until`, never later than now: the transaction's now(), which the job's
    // created_at is too, so what it counts is what it will go through.
    const counted = await client.query<{ valid: boolean; found: number }>(
      `WITH job AS (
         SELECT $1::bigint AS team_id, $2::bigint AS webhook_id, $3::timestamptz AS since, least(coalesce($4::timestamptz, now()), now()) AS until, now() AS created_at
       )
       SELECT (SELECT since < until FROM job) AS valid,
              (SELECT count(*)::int FROM (SELECT 1 FROM job, deliveries AS d WHERE ${failedInWindow('job')} LIMIT $5) AS failed) AS found`,
      [teamId, webhookId, since, until, request.maxEvents + 1],
    );
    const { valid, found } = counted.rows[0]!;
    if (!valid) return { outcome: 'empty_window' };
    if (found > request.maxEvents) return { outcome: 'too_large', maxEvents: request.maxEvents };
    const inserted = await client.query<{ id: number }>(
      `INSERT INTO delivery_recoveries (team_id, webhook_id, since, until, requested_until, found, pace_per_second)
       VALUES ($1, $2, $3::timestamptz, least(coalesce($4::timestamptz, now()), now()), $4::timestamptz, $5, $6) RETURNING id`,
      [teamId, webhookId, since, until, found, request.pacePerSecond],
    );
    const recovery = (await this.findIn(client, teamId, webhookId, Number(inserted.rows[0]!.id)))!;
    await recordIn?.(client, recovery);
    return { outcome: 'created', recovery };
  }

  async find(teamId: number, webhookId: number, id: number): Promise<RecoveryRecord | undefined> {
    return this.findIn(this.pool, teamId, webhookId, id);
  }

  private async findIn(db: Queryable, teamId: number, webhookId: number, id: number): Promise<RecoveryRecord | undefined> {
    const { rows } = await db.query<RecoveryRecord>(`${SELECT_RECORD} WHERE r.id = $1 AND r.team_id = $2 AND r.webhook_id = $3`, [id, teamId, webhookId]);
    return rows[0];
  }

  /** Jobs whose next step is due, the longest waiting first. */
  async due(limit: number): Promise<DueRecovery[]> {
    const { rows } = await this.pool.query<DueRecovery>(
      `SELECT id, team_id AS "teamId", webhook_id AS "webhookId" FROM delivery_recoveries
       WHERE status IN ('queued', 'running') AND next_step_at <= now() ORDER BY next_step_at LIMIT $1`,
      [limit],
    );
    return rows;
  }

  /** Milliseconds until the next step of any job is due; undefined when no job is unfinished. */
  async msUntilNextStep(): Promise<number | undefined> {
    const { rows } = await this.pool.query<{ ms: number | null }>(
      // greatest() skips NULLs: without the CASE, no unfinished job read as "due now" and the worker
      // looked again every millisecond.
      `SELECT CASE WHEN min(next_step_at) IS NOT NULL THEN greatest(0, extract(epoch FROM min(next_step_at) - now()) * 1000) END::float8 AS ms
       FROM delivery_recoveries WHERE status IN ('queued', 'running')`,
    );
    const ms = rows[0]?.ms;
    return ms === null || ms === undefined ? undefined : ms;
  }

  /**
   * One step of a job: re-sends up to `limit` of the next failed events, each due `1 / pace`
   * seconds after the one before, skipping those that reached the webhook or are on their way by
   * now (a later delivery of the event succeeded or is pending, or this job re-sent it already),
   * and schedules the next step when the last of these is due. The job succeeds once it has gone
   * through the window. Undefined when the job is not due, finished, or locked by another replica.
   */
  async step(id: number, limit: number, pacePerSecond: number): Promise<RecoveryStep | undefined> {
    const { rows } = await this.pool.query<RecoveryStep>({
      name: 'recoveries-step',
      text: `WITH job AS (
         SELECT * FROM delivery_recoveries WHERE id = $1 AND status IN ('queued', 'running') AND next_step_at <= now() FOR UPDATE SKIP LOCKED
       ), batch AS (
         SELECT d.id, d.created_at,
                EXISTS (
                  SELECT 1 FROM deliveries AS e
                  WHERE e.webhook_id = d.webhook_id AND e.event_id = d.event_id AND (e.status IN ('pending', 'succeeded') OR e.recovery_id = job.id)
                ) AS reached
         FROM job, deliveries AS d
         WHERE ${failedInWindow('job')}
           AND (job.after_id IS NULL OR (d.created_at, d.id) > (job.after_created_at, job.after_id))
         ORDER BY d.created_at, d.id
         LIMIT $2
       ), resent AS (
         INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, trace_context, next_attempt_at, event_created_at, redelivery_of, recovery_id, issue_id, stream_seq)
         SELECT gen_random_uuid(), o.event_id, o.event, o.team_id, o.webhook_id, o.body, NULL,
                now() + make_interval(secs => (row_number() OVER (ORDER BY b.created_at, b.id) - 1) / $3::float8),
                o.event_created_at, o.id, job.id, o.issue_id, o.stream_seq
         FROM job, batch AS b JOIN deliveries AS o ON o.id = b.id
         WHERE NOT b.reached
         RETURNING 1
       ), last AS (
         SELECT created_at, id FROM batch ORDER BY created_at DESC, id DESC LIMIT 1
       ), counts AS (
         SELECT (SELECT count(*) FROM resent)::int AS queued, (SELECT count(*) FROM batch)::int AS seen
       ), moved AS (
         UPDATE delivery_recoveries AS r SET
           queued = r.queued + counts.queued,
           skipped = CASE WHEN counts.seen < $2 THEN greatest(r.found, r.queued + r.skipped + counts.seen) - (r.queued + counts.queued)
                          ELSE r.skipped + counts.seen - counts.queued END,
           found = CASE WHEN counts.seen < $2 THEN greatest(r.found, r.queued + r.skipped + counts.seen) ELSE r.found END,
           after_created_at = coalesce((SELECT created_at FROM last), r.after_created_at),
           after_id = coalesce((SELECT id FROM last), r.after_id),
           pace_per_second = $3,
           status = CASE WHEN counts.seen < $2 THEN 'succeeded' ELSE 'running' END,
           started_at = coalesce(r.started_at, now()),
           finished_at = CASE WHEN counts.seen < $2 THEN now() END,
           next_step_at = now() + make_interval(secs => greatest(counts.queued, 1) / $3::float8),
           updated_at = now()
         FROM job, counts
         WHERE r.id = job.id
         RETURNING counts.queued, counts.seen - counts.queued AS skipped, counts.seen < $2 AS finished
       )
       SELECT queued, skipped, finished FROM moved`,
      values: [id, limit, pacePerSecond],
    });
    return rows[0];
  }

  /** Ends a job that cannot go on (its webhook was deleted or deactivated). */
  async fail(id: number, error: string): Promise<void> {
    await this.pool.query(
      `UPDATE delivery_recoveries SET status = 'failed', error = $2, finished_at = now(), updated_at = now()
       WHERE id = $1 AND status IN ('queued', 'running')`,
      [id, error],
    );
  }

  /** Puts a job's next step off (its webhook could not be looked up). */
  async postpone(id: number, delayMs: number): Promise<void> {
    await this.pool.query(`UPDATE delivery_recoveries SET next_step_at = now() + make_interval(secs => $2) WHERE id = $1 AND status IN ('queued', 'running')`, [
      id,
      delayMs / 1000,
    ]);
  }

  /** Removes up to `limit` jobs finished more than `retentionMs` ago; resolves to how many. */
  async deleteFinishedBefore(retentionMs: number, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM delivery_recoveries WHERE id IN (
         SELECT id FROM delivery_recoveries WHERE finished_at < now() - make_interval(secs => $1) ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED
       )`,
      [retentionMs / 1000, limit],
    );
    return rowCount ?? 0;
  }
}
