import { config, runtime } from './instrumentation';
import { join } from 'node:path';
import { publicKeysOf } from '@worklane/config';
import { openServiceDatabase, pingDatabase } from '@worklane/db';
import { closeHttpServer, listen, readiness, inputLimitsFrom, serviceIdempotency } from '@worklane/http';
import { connectNats, ensureWebhookChangesStream, jetstream, jetstreamManager, webhookChangesLimitsFrom } from '@worklane/messaging';
import { exitOnStartupFailure, closeMetricsServer, serveMetrics } from '@worklane/observability';
import { dnsServersLookup } from '@worklane/webhooks/resolver';
import { SecretBox } from '@worklane/webhooks/secret-box';
import { createApp } from './app';
import { TRUSTED_PRINCIPALS, webhookLimits } from './config';
import { resealSecrets } from './data/webhooks';
import { openSecret, sealSecret } from './domain/secrets';
import { JetStreamChangeNotifier } from './events/change-notices';

const MIGRATIONS = join(__dirname, '..', 'migrations');

async function main(): Promise<void> {
  const { logger, metrics, lifecycle, tracing } = runtime;
  const pool = await openServiceDatabase('webhook', config, MIGRATIONS, logger);
  const secretBox = new SecretBox({ current: config.WEBHOOK_SECRET_KEY, previous: config.WEBHOOK_PREVIOUS_SECRET_KEYS });

  // After a key rotation, move every secret to the new key so the old one can be retired.
  const rotation = await resealSecrets(pool, secretBox.previousKeyIds, (sealed, teamId, kind) => {
    try {
      return sealSecret(secretBox, openSecret(secretBox, sealed, teamId, kind), teamId, kind);
    } catch {
      return undefined;
    }
  });
  if (rotation.resealed > 0) logger.info({ resealed: rotation.resealed, keyId: secretBox.currentKeyId }, 'webhook secrets re-encrypted under the current key');
  if (rotation.failed.length > 0) logger.error({ webhookIds: rotation.failed }, 'webhook secrets that could not be decrypted were left as they are');

  // Every committed change of a webhook is announced on WEBHOOK_CHANGES before its call is
  // answered: the delivery service's in-memory copy of the webhooks depends on it.
  const nats = await connectNats(config.NATS_URL, 'webhook', logger);
  await ensureWebhookChangesStream(await jetstreamManager(nats), webhookChangesLimitsFrom(config), logger);
  const changes = new JetStreamChangeNotifier({ js: jetstream(nats), logger, registry: metrics.registry, timeoutMs: config.WEBHOOK_CHANGE_PUBLISH_TIMEOUT_MS });

  // Idempotency-Key records of POSTs, and the worker that deletes them once expired.
  const idempotency = serviceIdempotency(pool, config, logger, metrics.registry);
  idempotency.retention.start();
  const app = createApp({
    inputLimits: inputLimitsFrom(config),
    retryAfterSeconds: config.UNAVAILABLE_RETRY_AFTER_SECONDS,
    pool,
    logger,
    metrics,
    publicKeys: publicKeysOf(config, TRUSTED_PRINCIPALS),
    secretBox,
    receiverPolicy: {
      allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS,
      lookup: dnsServersLookup({ servers: config.WEBHOOK_DNS_SERVERS, timeoutMs: config.WEBHOOK_DNS_TIMEOUT_MS }),
      timeoutMs: config.WEBHOOK_DNS_TIMEOUT_MS,
    },
    // Its own database only: a change while NATS is away is answered 503 by itself, reads need nothing else.
    isReady: readiness({ lifecycle, logger, checks: { database: () => pingDatabase(pool) } }),
    limits: webhookLimits(config),
    idempotency: idempotency.options,
    changes,
  });
  const grpcPort = await app.grpc.listen(config.HOST, config.GRPC_PORT);
  const server = await listen(app.http, config.HTTP_PORT, config.HOST);
  const metricsServer = await serveMetrics(metrics, config.METRICS_PORT, config.HOST);

  lifecycle
    .onShutdown('http', () => closeHttpServer(server, config.SHUTDOWN_DRAIN_MS))
    .onShutdown('grpc', () => app.grpc.shutdown())
    .onShutdown('idempotency key retention', () => idempotency.retention.stop())
    .onShutdown('nats', async () => {
      await changes.stop();
      await nats.drain();
    })
    .onShutdown('database', () => pool.end())
    .onShutdown('metrics', () => closeMetricsServer(metricsServer))
    .onShutdown('tracing', () => tracing.shutdown());
  lifecycle.handleSignals();
  logger.info({ metricsPort: config.METRICS_PORT, httpPort: config.HTTP_PORT, grpcPort }, 'webhook service started');
}

main().catch((error) => exitOnStartupFailure(runtime.logger, error));
