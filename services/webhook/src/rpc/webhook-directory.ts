import { z } from 'zod';
import { WEBHOOK_EVENTS } from '@worklane/api-contract';
import type { Pool } from '@worklane/db';
import { RpcError, type UnaryHandler } from '@worklane/grpc';
import type { webhookV1 } from '@worklane/proto';
import type { SecretBox } from '@worklane/webhooks';
import { findSubscription, listSubscriptions, type SealedSubscription } from '../data/webhooks';
import { openSecret } from '../domain/secrets';

/** A positive int64 id; proto3 sends 0 for a missing one. */
const id = z.number().int().positive();
const listSubscriptionsRequest = z.object({ team_id: id, event: z.enum(WEBHOOK_EVENTS) });
const getWebhookRequest = z.object({ team_id: id, webhook_id: id });

const MESSAGES: Record<string, string> = {
  team_id: 'must be a positive integer',
  webhook_id: 'must be a positive integer',
  event: `must be one of ${WEBHOOK_EVENTS.join(', ')}`,
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
};

/**
 * WebhookDirectory: the delivery service's view of subscriptions, secrets included. A secret
 * that cannot be decrypted fails the call (INTERNAL) rather than letting a delivery go unsigned.
 */
export function webhookDirectoryHandlers(pool: Pool, secretBox: SecretBox): Handlers {
  const toSubscription = (webhook: SealedSubscription): webhookV1.Subscription => ({
    id: webhook.id,
    team_id: webhook.team_id,
    url: webhook.url,
    events: webhook.events,
    active: webhook.active,
    secret: webhook.secret_sealed === null ? '' : openSecret(secretBox, webhook.secret_sealed, webhook.team_id),
  });

  return {
    async ListSubscriptions(request) {
      const { team_id, event } = parseRequest(listSubscriptionsRequest, request);
      return { subscriptions: (await listSubscriptions(pool, team_id, event)).map(toSubscription) };
    },
    async GetWebhook(request) {
      const { team_id, webhook_id } = parseRequest(getWebhookRequest, request);
      const webhook = await findSubscription(pool, team_id, webhook_id);
      if (!webhook) throw RpcError.notFound('webhook not found');
      return toSubscription(webhook);
    },
  };
}
