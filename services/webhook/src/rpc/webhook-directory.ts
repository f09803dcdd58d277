import { z } from 'zod';
import { OPERATIONAL_EVENTS, WEBHOOK_EVENTS, isOperationalEvent } from '@worklane/api-contract';
import type { Pool } from '@worklane/db';
import { RpcError, type UnaryHandler } from '@worklane/grpc';
import type { webhookV1 } from '@worklane/proto';
import type { SecretBox } from '@worklane/webhooks';
import { disableWebhook, findSubscription, listSubscriptions, type SealedSubscription } from '../data/webhooks';
import { openSecret } from '../domain/secrets';
import type { WebhookChangeNotifier } from '../events/change-notices';

/** Longest reason a disabled webhook records. */
export const DISABLED_REASON_MAX_LENGTH = 500;

/** A positive int64 id; proto3 sends 0 for a missing one. */
const id = z.number().int().positive();
const listSubscriptionsRequest = z.object({ team_id: id, event: z.enum([...WEBHOOK_EVENTS, ...OPERATIONAL_EVENTS]) });
const getWebhookRequest = z.object({ team_id: id, webhook_id: id });
const disableWebhookRequest = z.object({ team_id: id, webhook_id: id, reason: z.string().trim().min(1).max(DISABLED_REASON_MAX_LENGTH) });

const MESSAGES: Record<string, string> = {
  team_id: 'must be a positive integer',
  webhook_id: 'must be a positive integer',
  event: `must be one of ${[...WEBHOOK_EVENTS, ...OPERATIONAL_EVENTS].join(', ')}`,
  reason: `must be 1 to ${DISABLED_REASON_MAX_LENGTH} characters`,
};

/** INVALID_ARGUMENT naming the first bad field. */
function parseRequest<Schema extends z.ZodType>(schema: Schema, request: unknown): z.infer<Schema> {
  const result = schema.safeParse(request);
  if (result.success) return result.data;
  const field = String(result.error.issues[0]?.path[0] ?? 'request');
  throw RpcError.invalidArgument(`${field} ${MESSAGES[field] ?? 'is invalid'}`);
}

type Handlers = {
  ListSubscriptions: UnaryHandler<webhookV1.ListSubscriptionsRequest__Output, webhookV1.ListSubscriptionsResponse>;
  GetWebhook: UnaryHandler<webhookV1.GetWebhookRequest__Output, webhookV1.Subscription>;
  DisableWebhook: UnaryHandler<webhookV1.DisableWebhookRequest__Output, webhookV1.DisableWebhookResponse>;
};

/**
 * WebhookDirectory: the delivery service's view of subscriptions, secrets and keys included. A
 * value that cannot be decrypted fails the call (INTERNAL) rather than letting a delivery go
 * unsigned or signed by fewer secrets than the receiver may expect.
 */
export function webhookDirectoryHandlers(pool: Pool, secretBox: SecretBox, changes: WebhookChangeNotifier): Handlers {
  const toSubscription = (webhook: SealedSubscription): webhookV1.Subscription => ({
    id: webhook.id,
    team_id: webhook.team_id,
    url: webhook.url,
    events: webhook.events,
    active: webhook.active,
    secret: webhook.secret_sealed === null ? '' : openSecret(secretBox, webhook.secret_sealed, webhook.team_id),
    previous_secrets: webhook.previous_secrets.map((previous) => ({
      secret: openSecret(secretBox, previous.secret_sealed, webhook.team_id),
      expires_at_ms: previous.expires_at_ms,
    })),
    ed25519_private_key: webhook.ed25519_key_sealed === null ? '' : openSecret(secretBox, webhook.ed25519_key_sealed, webhook.team_id, 'ed25519'),
    organization_ids: webhook.organization_ids,
    project_ids: webhook.project_ids,
    rate_limit_per_second: webhook.rate_limit_per_second ?? 0,
    operational_events: webhook.operational_events,
  });

  return {
    async ListSubscriptions(request) {
      const { team_id, event } = parseRequest(listSubscriptionsRequest, request);
      return { subscriptions: (await listSubscriptions(pool, team_id, event, isOperationalEvent(event))).map(toSubscription) };
    },
    async GetWebhook(request) {
      const { team_id, webhook_id } = parseRequest(getWebhookRequest, request);
      const webhook = await findSubscription(pool, team_id, webhook_id);
      if (!webhook) throw RpcError.notFound('webhook not found');
      return toSubscription(webhook);
    },
    async DisableWebhook(request) {
      const { team_id, webhook_id, reason } = parseRequest(disableWebhookRequest, request);
      const webhook = await disableWebhook(pool, team_id, webhook_id, reason);
      if (!webhook) throw RpcError.notFound('webhook not found');
      await changes.notify({ team_id, webhook_id, change: 'disabled' });
      return { webhook: toSubscription(webhook) };
    },
  };
}
