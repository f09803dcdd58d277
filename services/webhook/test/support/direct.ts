// The webhook service in-process against a real PostgreSQL database, called with identities
// signed the way the gateway signs them, and its WebhookDirectory over real gRPC.
import type { Signer } from '@worklane/config';
import type { Pool } from '@worklane/db';
import { createGrpcClient, unaryCall } from '@worklane/grpc';
import type { WebhookChange } from '@worklane/messaging';
import { createLogger, createMetrics, type ServiceMetrics } from '@worklane/observability';
import { loadProto, type WebhookProto, type webhookV1 } from '@worklane/proto';
import { createServiceDatabase, publicKeysOf, randomKey, signedCaller, signerOf, signingKeyPairs, type Caller, type SigningKeyPair, type TestDatabase } from '@worklane/testing';

import { AllowedCidrs, SecretBox } from '@worklane/webhooks';
import { createApp, type WebhookApp } from '../../src/app';
import { TRUSTED_PRINCIPALS, webhookLimits, type Config } from '../../src/config';
import type { WebhookChangeNotifier } from '../../src/events/change-notices';

export interface Directory {
  client: webhookV1.WebhookDirectoryClient;
  listSubscriptions(request: webhookV1.ListSubscriptionsRequest): Promise<webhookV1.ListSubscriptionsResponse__Output>;
  getWebhook(request: webhookV1.GetWebhookRequest): Promise<webhookV1.Subscription__Output>;
  disableWebhook(request: webhookV1.DisableWebhookRequest): Promise<webhookV1.DisableWebhookResponse__Output>;
}

export interface DirectWebhookService {
  app: WebhookApp;
  pool: Pool;
  metrics: ServiceMetrics;
  /** The gateway's signer: what the service accepts as the identity of an API request. */
  identityKey: Signer;
  /** Every principal's key pair (PEM). */
  keys: Record<'gateway' | 'console' | 'issue' | 'delivery' | 'cli', SigningKeyPair>;
  secretKey: string;
  database: TestDatabase;
  grpcAddress: string;
  as(teamId: number, userId?: number): Caller;
  directory(): Directory;
  /** The change notices the service published, in order (NATS is not involved in-process). */
  notices: WebhookChange[];
  stop(): Promise<void>;
}

export interface DirectOptions {
  allowedCidrs?: string[];
  /** Share a database (and its migrations) with another instance. */
  database?: TestDatabase;
  secretKey?: string;
  previousSecretKeys?: string[];
  /** Share the principals' key pairs with another instance. */
  keys?: Record<'gateway' | 'console' | 'issue' | 'delivery' | 'cli', SigningKeyPair>;
  /** Settings of the limits (rotation, rate limit, quota) other than their defaults. */
  limits?: Partial<Config>;
  /** Publishes the change notices; by default they are only recorded in `notices`. */
  notifier?: WebhookChangeNotifier;
}

export async function startDirectWebhookService(options: DirectOptions = {}): Promise<DirectWebhookService> {
  const webhookDatabase = await createServiceDatabase('webhook', { database: options.database });
  const { database } = webhookDatabase;
  const pool = webhookDatabase.pool('webhook-test', { max: 5 });
  const metrics = createMetrics('webhook');
  const keys = options.keys ?? signingKeyPairs();
  const identityKey = signerOf(keys, 'gateway');
  const secretKey = options.secretKey ?? randomKey();
  const notices: WebhookChange[] = [];
  const app = createApp({
    pool,
    logger: createLogger('webhook', 'silent'),
    metrics,
    publicKeys: publicKeysOf(keys, TRUSTED_PRINCIPALS),
    secretBox: new SecretBox({ current: secretKey, previous: options.previousSecretKeys ?? [] }),
    receiverPolicy: { allowedCidrs: AllowedCidrs.parse(options.allowedCidrs ?? []), timeoutMs: 2_000 },
    isReady: () => true,
    limits: webhookLimits(options.limits ?? {}),
    changes: {
      notify: async (change) => {
        notices.push(change);
        await options.notifier?.notify(change);
      },
    },
  });
  const grpcPort = await app.grpc.listen('127.0.0.1', 0);
  const grpcAddress = `127.0.0.1:${grpcPort}`;
  const clients: webhookV1.WebhookDirectoryClient[] = [];

  const as = (teamId: number, userId = 1): Caller => signedCaller(app.http, identityKey, teamId, userId);

  const directory = (): Directory => {
    const { WebhookDirectory } = loadProto<WebhookProto>('webhook').worklane.webhook.v1;
    const client = createGrpcClient(WebhookDirectory, grpcAddress, { caller: 'delivery', signingKey: signerOf(keys, 'delivery').key });
    clients.push(client);
    return {
      client,
      listSubscriptions: (body) => unaryCall((metadata, callOptions, done) => client.ListSubscriptions(body, metadata, callOptions, done)),
      getWebhook: (body) => unaryCall((metadata, callOptions, done) => client.GetWebhook(body, metadata, callOptions, done)),
      disableWebhook: (body) => unaryCall((metadata, callOptions, done) => client.DisableWebhook(body, metadata, callOptions, done)),
    };
  };

  return {
    app,
    pool,
    metrics,
    identityKey,
    keys,
    secretKey,
    database,
    grpcAddress,
    as,
    directory,
    notices,
    async stop() {
      for (const client of clients) client.close();
      await app.grpc.shutdown();
      await webhookDatabase.drop();
    },
  };
}
