import type { Express } from 'express';
import type { PublicKeys } from '@worklane/config';
import type { Pool } from '@worklane/db';
import { createGrpcServer, type GrpcServer } from '@worklane/grpc';
import { createServiceApp, idempotentPosts, identityIssuersOf, type IdempotencyOptions, type InputLimits } from '@worklane/http';
import { promClient, type Logger, type ServiceMetrics } from '@worklane/observability';
import { loadProto, type WebhookProto } from '@worklane/proto';
import type { SecretBox } from '@worklane/webhooks';
import { webhookLimits, type WebhookLimits } from './config';
import type { ReceiverPolicy } from './domain/receiver-address';
import { answerSeal } from './domain/secrets';
import type { WebhookChangeNotifier } from './events/change-notices';
import { secretRotationRoutes, webhookRoutes } from './routes/webhooks';
import { webhookDirectoryHandlers } from './rpc/webhook-directory';

export interface AppDeps {
  /** Query limits and how much of a 422 is listed (the HTTP_MAX_* settings). */
  inputLimits?: Partial<InputLimits>;
  /** Retry-After of the 503 answered when a dependency is unavailable (UNAVAILABLE_RETRY_AFTER_SECONDS). */
  retryAfterSeconds?: number;
  pool: Pool;
  logger: Logger;
  metrics: ServiceMetrics;
  /** Public keys of the gateway and console (identity headers) and of the delivery service (gRPC caller). */
  publicKeys: PublicKeys;
  /** Encrypts signing secrets at rest (WEBHOOK_SECRET_KEY). */
  secretBox: SecretBox;
  /** Which hosts a webhook URL may point to (WEBHOOK_ALLOWED_CIDRS, WEBHOOK_DNS_SERVERS). */
  receiverPolicy: ReceiverPolicy;
  isReady: () => boolean | Promise<boolean>;
  /** Page sizes, the per-team webhook quota, rotation and rate limits; the configuration's defaults when not given. */
  limits?: WebhookLimits;
  /** Idempotency-Key on POSTs (docs/api-idempotency.md); without it the header is ignored. */
  idempotency?: IdempotencyOptions;
  /** Publishes a notice of every committed webhook change before the call is answered. */
  changes: WebhookChangeNotifier;
}

/** Only the delivery service reads subscriptions and their signing secrets, and switches failing ones off. */
export const WEBHOOK_DIRECTORY_CALLERS = {
  ListSubscriptions: ['delivery'],
  GetWebhook: ['delivery'],
  DisableWebhook: ['delivery'],
} as const;

export interface WebhookApp {
  /** The public API behind the gateway, with /healthz, /readyz and /metrics. */
  http: Express;
  /** WebhookDirectory for the delivery service, with the standard health service. */
  grpc: GrpcServer;
}

/** Builds the webhook service's HTTP app and gRPC server; the caller listens. */
export function createApp(deps: AppDeps): WebhookApp {
  const urlRejections = new promClient.Counter({
    name: 'worklane_webhook_url_rejections_total',
    help: 'Webhook URLs refused because their host is not public or does not resolve',
    labelNames: ['reason'],
    registers: [deps.metrics.registry],
  });

  const http = createServiceApp({
    logger: deps.logger,
    inputLimits: deps.inputLimits,
    retryAfterSeconds: deps.retryAfterSeconds,
    metrics: deps.metrics,
    isReady: deps.isReady,
    identityIssuers: identityIssuersOf(deps.publicKeys),
    routes: (router) => {
      const limits = deps.limits ?? webhookLimits();
      // Answers kept for an Idempotency-Key are sealed: a rotation's holds the new secret.
      if (deps.idempotency) router.use(idempotentPosts({ ...deps.idempotency, seal: answerSeal(deps.secretBox) }));
      secretRotationRoutes(router, { pool: deps.pool, secretBox: deps.secretBox, rotation: limits.rotation, changes: deps.changes });
      webhookRoutes(router, {
        pool: deps.pool,
        logger: deps.logger,
        secretBox: deps.secretBox,
        receiverPolicy: deps.receiverPolicy,
        onUrlRefused: (reason) => urlRejections.inc({ reason }),
        changes: deps.changes,
        ...limits,
      });
    },
  });

  const { v1 } = loadProto<WebhookProto>('webhook').worklane.webhook;
  const grpc = createGrpcServer({ logger: deps.logger, metrics: deps.metrics, callers: deps.publicKeys });
  grpc.addService(v1.WebhookDirectory.service, webhookDirectoryHandlers(deps.pool, deps.secretBox, deps.changes), WEBHOOK_DIRECTORY_CALLERS);
  return { http, grpc };
}
