import { timestamp, type Pool, type Queryable } from '@worklane/db';
import { isSuccess } from '@worklane/webhooks/retry-schedule';
import { BUCKET_COUNT, bucketOf, emptyBuckets } from './latency';

/** One recorded attempt, as endpoint health counts it. */
export interface AttemptObservation {
  teamId: number;
  webhookId: number;
  startedAtMs: number;
  durationMs: number;
  /** The receiver's HTTP status; null when it never answered. */
  statusCode: number | null;
  /** Why it never answered (timeout, refused...), when it did not. */
  error: string | null;
}

/** A circuit breaker transition of one delivery replica. */
export interface BreakerTransition {
  teamId: number;
  webhookId: number;
  state: 'open' | 'closed';
  atMs: number;
  /** When an open breaker lets its probe go. */
  retryAtMs: number | null;
}

/** The stored health of one webhook (timestamps as the API writes them). */
export interface HealthRow {
  last_success_at: string | null;
  last_failure_at: string | null;
  last_error_status: number | null;
  last_error_message: string | null;
  failing_since: string | null;
  /** When webhook.failing was sent about the current streak. */
  failing_notice_at: string | null;
  /** When the current streak switches the webhook off if it goes on (with the `disableAfterMs` asked for). */
  disable_at: string | null;
  disabled_at: string | null;
  breaker_state: 'open' | 'closed';
  breaker_changed_at: string | null;
  breaker_retry_at: string | null;
  breaker_retry_at_ms: number | null;
}

/** One window's counts and the histogram of its response times. */
export interface WindowTotals {
  attempts: number;
  successes: number;
  failures: number;
  buckets: number[];
}

const MINUTE_MS = 60_000;

interface MinuteTotals {
  webhookId: number;
  minuteMs: number;
  attempts: number;
  successes: number;
  failures: number;
  buckets: number[];
}

interface WebhookTotals {
  webhookId: number;
  teamId: number;
  lastSuccessMs: number | null;
  lastFailure: AttemptObservation | null;
  /** The first failure after the batch's last success (or its first failure when it has none). */
  streakStartMs: number | null;
}

/** Sums a batch per webhook and minute, and per webhook, in a stable order (rows are locked in it). */
function summarize(attempts: AttemptObservation[]): { minutes: MinuteTotals[]; webhooks: WebhookTotals[] } {
  const minutes = new Map<string, MinuteTotals>();
  const webhooks = new Map<number, WebhookTotals>();
  const ordered = [...attempts].sort((a, b) => a.startedAtMs - b.startedAtMs);
  for (const attempt of ordered) {
    const succeeded = isSuccess(attempt.statusCode);
    const minuteMs = Math.floor(attempt.startedAtMs / MINUTE_MS) * MINUTE_MS;
    const key = `${attempt.webhookId}/${minuteMs}`;
    let minute = minutes.get(key);
    if (!minute) {
      minute = { webhookId: attempt.webhookId, minuteMs, attempts: 0, successes: 0, failures: 0, buckets: emptyBuckets() };
      minutes.set(key, minute);
    }
    minute.attempts += 1;
    if (succeeded) minute.successes += 1;
    else minute.failures += 1;
    // Response times are those of attempts that got an answer: a refused connection says nothing of them.
    if (attempt.statusCode !== null) minute.buckets[bucketOf(attempt.durationMs)] = (minute.buckets[bucketOf(attempt.durationMs)] as number) + 1;

    let webhook = webhooks.get(attempt.webhookId);
    if (!webhook) {
      webhook = { webhookId: attempt.webhookId, teamId: attempt.teamId, lastSuccessMs: null, lastFailure: null, streakStartMs: null };
      webhooks.set(attempt.webhookId, webhook);
    }
    if (succeeded) {
      webhook.lastSuccessMs = attempt.startedAtMs;
      webhook.streakStartMs = null;
    } else {
      webhook.lastFailure = attempt;
      webhook.streakStartMs ??= attempt.startedAtMs;
    }
  }
  const byKey = <T extends { webhookId: number }>(a: T, b: T) => a.webhookId - b.webhookId;
  return {
    minutes: [...minutes.values()].sort((a, b) => byKey(a, b) || a.minuteMs - b.minuteMs),
    webhooks: [...webhooks.values()].sort(byKey),
  };
}

/** The latest time after which a failure may start a streak: the last success, or the last reset by auto-disable. */
const STREAK_FLOOR = `coalesce(greatest(h.last_success_at, excluded.last_success_at, h.streak_reset_at), '-infinity'::timestamptz)`;

/**
 * Endpoint health as it is stored: per-minute totals of attempts and their response times, and
 * per webhook the latest outcomes, the failing streak and the circuit breaker's latest transition.
 */
export class HealthStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Adds a batch of recorded attempts, in one statement. Attempts recorded out of order (by two
   * replicas) leave the same state as in order: a streak starts at the earliest failure that came
   * after the latest success.
   */
  async recordAttempts(attempts: AttemptObservation[]): Promise<void> {
    if (attempts.length === 0) return;
    const { minutes, webhooks } = summarize(attempts);
    // A data-modifying WITH runs whether or not the main statement reads it.
    await this.pool.query({
      name: 'webhook-health-record',
      text: `WITH minutes AS (
         INSERT INTO webhook_health_minutes AS m (webhook_id, minute, attempts, successes, failures, duration_buckets)
         SELECT r.webhook_id, to_timestamp(r.minute_ms / 1000), r.attempts, r.successes, r.failures, r.buckets::int[]
         FROM unnest($1::bigint[], $2::float8[], $3::int[], $4::int[], $5::int[], $6::text[]) WITH ORDINALITY
           AS r (webhook_id, minute_ms, attempts, successes, failures, buckets, position)
         ORDER BY r.position
         ON CONFLICT (webhook_id, minute) DO UPDATE SET
           attempts = m.attempts + excluded.attempts,
           successes = m.successes + excluded.successes,
           failures = m.failures + excluded.failures,
           duration_buckets = ARRAY(
             SELECT coalesce(old, 0) + coalesce(new, 0)
             FROM unnest(m.duration_buckets, excluded.duration_buckets) WITH ORDINALITY AS b (old, new, position)
             ORDER BY b.position)
         RETURNING 1
       )
       INSERT INTO webhook_health AS h (webhook_id, team_id, last_success_at, last_failure_at, last_error_status, last_error_message, failing_since)
       SELECT w.webhook_id, w.team_id, to_timestamp(w.success_ms / 1000), to_timestamp(w.failure_ms / 1000), w.status, w.message, to_timestamp(w.streak_ms / 1000)
       FROM unnest($7::bigint[], $8::bigint[], $9::float8[], $10::float8[], $11::int[], $12::text[], $13::float8[]) WITH ORDINALITY
         AS w (webhook_id, team_id, success_ms, failure_ms, status, message, streak_ms, position)
       ORDER BY w.position
       ON CONFLICT (webhook_id) DO UPDATE SET
         last_success_at = greatest(h.last_success_at, excluded.last_success_at),
         last_failure_at = greatest(h.last_failure_at, excluded.last_failure_at),
         last_error_status = CASE WHEN excluded.last_failure_at >= coalesce(h.last_failure_at, '-infinity'::timestamptz) THEN excluded.last_error_status ELSE h.last_error_status END,
         last_error_message = CASE WHEN excluded.last_failure_at >= coalesce(h.last_failure_at, '-infinity'::timestamptz) THEN excluded.last_error_message ELSE h.last_error_message END,
         failing_since = least(
           CASE WHEN h.failing_since > ${STREAK_FLOOR} THEN h.failing_since END,
           CASE WHEN excluded.failing_since > ${STREAK_FLOOR} THEN excluded.failing_since END,
           CASE WHEN excluded.last_failure_at > ${STREAK_FLOOR} THEN excluded.last_failure_at END),
         updated_at = now()`,
      values: [
        minutes.map((minute) => minute.webhookId),
        minutes.map((minute) => minute.minuteMs),
        minutes.map((minute) => minute.attempts),
        minutes.map((minute) => minute.successes),
        minutes.map((minute) => minute.failures),
        minutes.map((minute) => `{${minute.buckets.join(',')}}`),
        webhooks.map((webhook) => webhook.webhookId),
        webhooks.map((webhook) => webhook.teamId),
        webhooks.map((webhook) => webhook.lastSuccessMs),
        webhooks.map((webhook) => webhook.lastFailure?.startedAtMs ?? null),
        webhooks.map((webhook) => webhook.lastFailure?.statusCode ?? null),
        webhooks.map((webhook) => (webhook.lastFailure ? errorMessage(webhook.lastFailure) : null)),
        webhooks.map((webhook) => webhook.streakStartMs),
      ],
    });
  }

  /** Stores a breaker transition unless a later one of another replica is stored already. */
  async recordBreaker(transition: BreakerTransition): Promise<void> {
    await this.pool.query({
      name: 'webhook-health-breaker',
      text: `INSERT INTO webhook_health AS h (webhook_id, team_id, breaker_state, breaker_changed_at, breaker_retry_at)
       VALUES ($1, $2, $3, to_timestamp($4::float8 / 1000), to_timestamp($5::float8 / 1000))
       ON CONFLICT (webhook_id) DO UPDATE SET
         breaker_state = excluded.breaker_state, breaker_changed_at = excluded.breaker_changed_at, breaker_retry_at = excluded.breaker_retry_at, updated_at = now()
       WHERE h.breaker_changed_at IS NULL OR h.breaker_changed_at <= excluded.breaker_changed_at`,
      values: [transition.webhookId, transition.teamId, transition.state, transition.atMs, transition.retryAtMs],
    });
  }

  /** The stored health of a webhook, undefined when it has had no attempt (or none lately). */
  async find(webhookId: number, db: Queryable = this.pool, disableAfterMs = 0): Promise<HealthRow | undefined> {
    const { rows } = await db.query<HealthRow>(
      `SELECT ${timestamp('last_success_at')}, ${timestamp('last_failure_at')}, last_error_status, last_error_message,
              ${timestamp('failing_since')},
              ${timestamp('CASE WHEN failing_notice_for = failing_since THEN failing_notice_at END', 'failing_notice_at')},
              ${timestamp('(failing_since + make_interval(secs => $2))', 'disable_at')}, ${timestamp('disabled_at')},
              breaker_state, ${timestamp('breaker_changed_at')}, ${timestamp('breaker_retry_at')},
              (extract(epoch FROM breaker_retry_at) * 1000)::float8 AS breaker_retry_at_ms
       FROM webhook_health WHERE webhook_id = $1`,
      [webhookId, disableAfterMs / 1000],
    );
    return rows[0];
  }

  /**
   * The totals of the last hour and the last day, by the minute: the current minute and the 59
   * (1,439) before it. At most 1,440 rows are read, however many attempts they count.
   */
  async windows(webhookId: number): Promise<{ now: string; nowMs: number; lastHour: WindowTotals; lastDay: WindowTotals }> {
    const { rows } = await this.pool.query<{ in_hour: boolean; attempts: number; successes: number; failures: number; duration_buckets: number[] }>({
      name: 'webhook-health-windows',
      text: `SELECT minute >= date_trunc('minute', now()) - interval '59 minutes' AS in_hour, attempts, successes, failures, duration_buckets
       FROM webhook_health_minutes
       WHERE webhook_id = $1 AND minute >= date_trunc('minute', now()) - interval '1439 minutes'`,
      values: [webhookId],
    });
    const { rows: clock } = await this.pool.query<{ now: string; now_ms: number }>(`SELECT ${timestamp('now()', 'now')}, (extract(epoch FROM now()) * 1000)::float8 AS now_ms`);
    const empty = (): WindowTotals => ({ attempts: 0, successes: 0, failures: 0, buckets: emptyBuckets() });
    const lastHour = empty();
    const lastDay = empty();
    for (const row of rows) {
      for (const totals of row.in_hour ? [lastHour, lastDay] : [lastDay]) {
        totals.attempts += row.attempts;
        totals.successes += row.successes;
        totals.failures += row.failures;
        for (let index = 0; index < BUCKET_COUNT; index += 1) totals.buckets[index] = (totals.buckets[index] as number) + (row.duration_buckets[index] ?? 0);
      }
    }
    const { now, now_ms: nowMs } = clock[0] as { now: string; now_ms: number };
    return { now, nowMs, lastHour, lastDay };
  }

  /**
   * Removes up to `limit` per-minute rows older than a day and an hour, and the health rows of
   * webhooks without an attempt (or breaker change) for `idleMs` and no failing streak. Resolves
   * to how many rows went.
   */
  async prune(idleMs: number, limit: number): Promise<number> {
    const { rows } = await this.pool.query<{ removed: number }>({
      name: 'webhook-health-prune',
      text: `WITH old_minutes AS (
         DELETE FROM webhook_health_minutes WHERE (webhook_id, minute) IN (
           SELECT webhook_id, minute FROM webhook_health_minutes WHERE minute < now() - interval '25 hours' ORDER BY minute LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1
       ), idle AS (
         DELETE FROM webhook_health WHERE webhook_id IN (
           SELECT webhook_id FROM webhook_health
           WHERE updated_at < now() - make_interval(secs => $1) AND failing_since IS NULL
           ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1
       )
       SELECT ((SELECT count(*) FROM old_minutes) + (SELECT count(*) FROM idle))::int AS removed`,
      values: [idleMs / 1000, limit],
    });
    return rows[0]?.removed ?? 0;
  }
}

/** What the health API shows of a failed attempt: the HTTP status, or why there was no answer. */
function errorMessage(attempt: AttemptObservation): string {
  if (attempt.statusCode !== null) return `HTTP ${attempt.statusCode}`;
  return attempt.error ?? 'no answer';
}
