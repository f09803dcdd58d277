import type { Pool } from '@worklane/db';
import { deliveryId, type EventHeader } from '../domain/delivery';

/**
 * Records a dead-lettered event in the delivery log of each webhook it was meant for: a delivery
 * that is already finished, `failed` with failure_reason `dead_lettered`, never attempted. Its
 * payload is the notice (`dead_letter.reason` says why). Ids are derived as for any delivery, so a
 * notice processed twice records nothing new. Resolves to how many entries are new.
 */
export async function recordDeadLettered(pool: Pool, event: EventHeader, notice: Buffer, webhookIds: number[]): Promise<number> {
  if (webhookIds.length === 0) return 0;
  const { rowCount } = await pool.query({
    name: 'deliveries-record-dead-lettered',
    text: `INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, status, failure_reason, next_attempt_at, event_created_at, completed_at, issue_id)
       SELECT planned.id, $2, $3, $4, planned.webhook_id, $5, 'failed', 'dead_lettered', NULL, $6::timestamptz, now(), $8
       FROM unnest($1::uuid[], $7::bigint[]) AS planned (id, webhook_id)
       ON CONFLICT (id) DO NOTHING`,
    values: [webhookIds.map((webhookId) => deliveryId(event.id, webhookId)), event.id, event.event, event.team_id, notice, event.created_at, webhookIds, event.issue_id ?? null],
  });
  return rowCount ?? 0;
}

/** Whether a stored delivery body is a dead-letter notice rather than an event: it was never sent. */
export function isDeadLetterNotice(body: Buffer): boolean {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown> | null;
    return typeof parsed === 'object' && parsed !== null && typeof parsed.dead_letter === 'object' && parsed.dead_letter !== null;
  } catch {
    return false;
  }
}
