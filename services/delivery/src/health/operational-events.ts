import type { Queryable } from '@worklane/db';
import { deliveryId } from '../domain/delivery';

/** Events about a team's webhooks themselves, sent to the webhooks that opted in to them. */
export const OPERATIONAL_EVENTS = ['webhook.failing', 'webhook.disabled'] as const;
export type OperationalEventName = (typeof OPERATIONAL_EVENTS)[number];

/** The last failed attempt, as an operational event and the health API show it. */
export interface LastError {
  at: string;
  /** The receiver's HTTP status, or null when it never answered. */
  status_code: number | null;
  /** `HTTP <status>`, or why there was no answer (timeout, connection refused...). */
  message: string;
}

/** The webhook an operational event is about: its public fields (never its secret). */
export interface WebhookSummary {
  id: number;
  url: string;
  events: string[];
  active: boolean;
}

export interface FailingStreak {
  /** The first failed attempt after the last successful one. */
  since: string;
  last_success_at: string | null;
  last_error: LastError | null;
}

export interface WebhookFailingBody {
  id: string;
  event: 'webhook.failing';
  created_at: string;
  team_id: number;
  webhook: WebhookSummary;
  failure: FailingStreak & { disable_at: string };
}

export interface WebhookDisabledBody {
  id: string;
  event: 'webhook.disabled';
  created_at: string;
  team_id: number;
  webhook: WebhookSummary & { disabled_reason: string; disabled_at: string };
  failure: FailingStreak;
}

export type OperationalEventBody = WebhookFailingBody | WebhookDisabledBody;

/**
 * The id of the operational event about one webhook's failing streak: derived from the event,
 * the webhook and when the streak began, so sending it again (a retried pass, another replica)
 * finds the deliveries already made instead of making new ones.
 */
export const operationalEventId = (event: OperationalEventName, webhookId: number, streakStart: string): string => deliveryId(`${event}@${streakStart}`, webhookId);

export function webhookFailingBody(input: { createdAt: string; teamId: number; webhook: WebhookSummary; streak: FailingStreak; disableAt: string }): WebhookFailingBody {
  return {
    id: operationalEventId('webhook.failing', input.webhook.id, input.streak.since),
    event: 'webhook.failing',
    created_at: input.createdAt,
    team_id: input.teamId,
    webhook: input.webhook,
    failure: { ...input.streak, disable_at: input.disableAt },
  };
}

export function webhookDisabledBody(input: { createdAt: string; teamId: number; webhook: WebhookSummary; streak: FailingStreak; reason: string }): WebhookDisabledBody {
  return {
    id: operationalEventId('webhook.disabled', input.webhook.id, input.streak.since),
    event: 'webhook.disabled',
    created_at: input.createdAt,
    team_id: input.teamId,
    webhook: { ...input.webhook, active: false, disabled_reason: input.reason, disabled_at: input.createdAt },
    failure: input.streak,
  };
}

/**
 * One delivery of the event to each of `webhookIds`, due at once, like any other delivery
 * (signed, retried, logged). A delivery that exists already is left as it is. Resolves to how
 * many are new.
 */
export async function createOperationalDeliveries(db: Queryable, body: OperationalEventBody, webhookIds: number[]): Promise<number> {
  if (webhookIds.length === 0) return 0;
  const bytes = Buffer.from(JSON.stringify(body));
  const { rowCount } = await db.query({
    name: 'deliveries-create-operational',
    text: `INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, trace_context, next_attempt_at, event_created_at)
     SELECT planned.id, $2, $3, $4, planned.webhook_id, $5, '{}'::jsonb, now(), $6::timestamptz
     FROM unnest($1::uuid[], $7::bigint[]) AS planned (id, webhook_id)
     ON CONFLICT (id) DO NOTHING`,
    values: [webhookIds.map((webhookId) => deliveryId(body.id, webhookId)), body.id, body.event, body.team_id, bytes, body.created_at, webhookIds],
  });
  return rowCount ?? 0;
}
