import type { KeyObject } from 'node:crypto';
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { DependencyUnavailableError } from '@worklane/observability';
import { loadProto, type WebhookProto, type webhookV1 } from '@worklane/proto';

/** A webhook as the delivery service needs it, secret included. Never logged, never returned. */
export interface WebhookTarget {
  id: number;
  teamId: number;
  url: string;
  events: string[];
  active: boolean;
  /** Null when the webhook has no secret. */
  secret: string | null;
}

export interface WebhookDirectory {
  /** Active webhooks of the team subscribed to `event`. */
  listSubscriptions(teamId: number, event: string): Promise<WebhookTarget[]>;
  /** Undefined when the webhook does not exist in the team (deleted). */
  getWebhook(teamId: number, webhookId: number): Promise<WebhookTarget | undefined>;
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
    close: () => client.close(),
  };
}
