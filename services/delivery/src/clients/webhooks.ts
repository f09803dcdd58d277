import type { KeyObject } from 'node:crypto';
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { DependencyUnavailableError } from '@worklane/observability';
import { loadProto, type WebhookProto, type webhookV1 } from '@worklane/proto';

/** A secret replaced by a rotation that still signs `webhook-signature` until it expires. */
export interface PreviousSecret {
  secret: string;
  /** Unix milliseconds after which it no longer signs. */
  expiresAtMs: number;
}

/** A webhook as the delivery service needs it, secrets included. Never logged, never returned. */
export interface WebhookTarget {
  id: number;
  teamId: number;
  url: string;
  events: string[];
  active: boolean;
  /** The newest secret (it alone signs X-Webhook-Signature); null when the webhook has none. */
  secret: string | null;
  /** Secrets of a rotation whose overlap has not ended, newest first. */
  previousSecrets: PreviousSecret[];
  /** Base64 of the 32-byte ed25519 seed when the webhook also signs with `v1a`; null otherwise. */
  ed25519PrivateKey: string | null;
  /** The webhook's scope besides its events: an empty list means every organization / project. */
  organizationIds: number[];
  projectIds: number[];
  /** Deliveries per second at most to the endpoint; null when there is no limit. */
  rateLimitPerSecond: number | null;
  /** The operational events it opted in to (webhook.failing, webhook.disabled). */
  operationalEvents: string[];
}

export interface WebhookDirectory {
  /**
   * Active webhooks of the team subscribed to `event`: an issue event through `events`, an
   * operational event (webhook.failing, webhook.disabled) through `operational_events`.
   */
  listSubscriptions(teamId: number, event: string): Promise<WebhookTarget[]>;
  /** Undefined when the webhook does not exist in the team (deleted). */
  getWebhook(teamId: number, webhookId: number): Promise<WebhookTarget | undefined>;
  /**
   * Switches the webhook off with `reason` recorded on it (auto-disable); one that is inactive
   * already is answered unchanged. Undefined when it does not exist in the team.
   */
  disableWebhook(teamId: number, webhookId: number, reason: string): Promise<WebhookTarget | undefined>;
}

/**
 * The webhook service did not answer: the sender retries the work later rather than failing it,
 * and an API request gets the 503 of every unavailable dependency.
 */
export class DirectoryUnavailableError extends DependencyUnavailableError {
  constructor(cause: unknown) {
    super('webhook service', cause);
    this.name = 'DirectoryUnavailableError';
  }
}

const toTarget = (subscription: webhookV1.Subscription__Output): WebhookTarget => ({
  id: subscription.id,
  teamId: subscription.team_id,
  url: subscription.url,
  events: subscription.events,
  active: subscription.active,
  secret: subscription.secret === '' ? null : subscription.secret,
  previousSecrets: subscription.previous_secrets.map((previous) => ({ secret: previous.secret, expiresAtMs: previous.expires_at_ms })),
  ed25519PrivateKey: subscription.ed25519_private_key === '' ? null : subscription.ed25519_private_key,
  organizationIds: subscription.organization_ids,
  projectIds: subscription.project_ids,
  rateLimitPerSecond: subscription.rate_limit_per_second > 0 ? subscription.rate_limit_per_second : null,
  operationalEvents: subscription.operational_events,
});

/** Any failure but NOT_FOUND means "ask again later": none of them says anything about the webhook. */
function unavailable(error: unknown): never {
  throw new DirectoryUnavailableError(error);
}

export function grpcWebhookDirectory(address: string, options: { caller: string; signingKey: KeyObject }): WebhookDirectory & { close(): void } {
  const { WebhookDirectory } = loadProto<WebhookProto>('webhook').worklane.webhook.v1;
  const client = createGrpcClient(WebhookDirectory, address, options);
  return {
    async listSubscriptions(teamId, event) {
      try {
        const response = await unaryCall<webhookV1.ListSubscriptionsResponse__Output>((metadata, callOptions, done) =>
          client.ListSubscriptions({ team_id: teamId, event }, metadata, callOptions, done),
        );
        return response.subscriptions.map(toTarget);
      } catch (error) {
        return unavailable(error);
      }
    },
    async getWebhook(teamId, webhookId) {
      try {
        const subscription = await unaryCall<webhookV1.Subscription__Output>((metadata, callOptions, done) =>
          client.GetWebhook({ team_id: teamId, webhook_id: webhookId }, metadata, callOptions, done),
        );
        return toTarget(subscription);
      } catch (error) {
        if ((error as grpc.ServiceError)?.code === grpc.status.NOT_FOUND) return undefined;
        return unavailable(error);
      }
    },
    async disableWebhook(teamId, webhookId, reason) {
      try {
        const response = await unaryCall<webhookV1.DisableWebhookResponse__Output>((metadata, callOptions, done) =>
          client.DisableWebhook({ team_id: teamId, webhook_id: webhookId, reason }, metadata, callOptions, done),
        );
        return response.webhook ? toTarget(response.webhook) : undefined;
      } catch (error) {
        if ((error as grpc.ServiceError)?.code === grpc.status.NOT_FOUND) return undefined;
        return unavailable(error);
      }
    },
    close: () => client.close(),
  };
}
