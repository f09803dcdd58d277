import type { Pool } from '@worklane/db';

/** A webhook's rate limit as the webhook service states it: deliveries per second, null for none. */
export interface EndpointRateLimit {
  webhookId: number;
  teamId: number;
  perSecond: number | null;
}

/**
 * The per-endpoint rate limits the claim enforces (endpoint_rate_limits): per limited webhook, a
 * token bucket of the attempts started (`started_tokens`) and one of the sending times booked
 * ahead for the deliveries held back (`tokens`), each holding a second's worth when full.
 */
export class EndpointRateStore {
  constructor(private readonly pool: Pool) {}

  /**
   * Sets the limits of these webhooks, in one statement. Only a limit that differs from the stored
   * one changes anything: the webhook's buckets start full at its new rate (or are removed with the
   * limit), and its deliveries that were given sending times at the old rate are due again, to be
   * paced at the new one.
   */
  async setLimits(limits: EndpointRateLimit[]): Promise<number> {
    if (limits.length === 0) return 0;
    const { rows } = await this.pool.query<{ changed: number }>({
      name: 'endpoint-rate-limits-set',
      text: `WITH wanted AS (
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[]) AS w (webhook_id, team_id, per_second)
       ), changed AS (
         SELECT w.webhook_id, w.team_id, w.per_second FROM wanted AS w
         LEFT JOIN endpoint_rate_limits AS r USING (webhook_id)
         WHERE w.per_second IS DISTINCT FROM r.per_second
       ), removed AS (
         DELETE FROM endpoint_rate_limits AS r USING changed AS c WHERE r.webhook_id = c.webhook_id AND c.per_second IS NULL
       ), stored AS (
         INSERT INTO endpoint_rate_limits (webhook_id, team_id, per_second, tokens, started_tokens)
         SELECT webhook_id, team_id, per_second, per_second, per_second FROM changed WHERE per_second IS NOT NULL
         ON CONFLICT (webhook_id) DO UPDATE SET team_id = excluded.team_id, per_second = excluded.per_second, tokens = excluded.tokens, refilled_at = now(),
           started_tokens = excluded.started_tokens, started_at = now()
       ), repaced AS (
         UPDATE deliveries AS d SET rate_paced = false, next_attempt_at = least(d.next_attempt_at, now())
         FROM changed AS c
         WHERE d.webhook_id = c.webhook_id AND d.status = 'pending' AND d.rate_paced AND d.lease_token IS NULL
       )
       SELECT count(*)::int AS changed FROM changed`,
      values: [limits.map((limit) => limit.webhookId), limits.map((limit) => limit.teamId), limits.map((limit) => limit.perSecond)],
    });
    return rows[0]?.changed ?? 0;
  }
}
