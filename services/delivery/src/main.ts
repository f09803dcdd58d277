import { config, runtime } from './instrumentation';
import { join } from 'node:path';
import { listPageLimits, publicKeysOf } from '@worklane/config';
import { openServiceDatabase, pingDatabase } from '@worklane/db';
import { closeHttpServer, listen, readiness, inputLimitsFrom, serviceIdempotency } from '@worklane/http';
import { exitOnStartupFailure, closeMetricsServer, serveMetrics, ThreadedRegistry, yieldToServiceThreads } from '@worklane/observability';
import { createApp } from './app';
import { grpcWebhookDirectory } from './clients/webhooks';
import { IDENTITY_ISSUERS } from './config';
import { DeliveryStore } from './data/deliveries';
import { HealthStore } from './health/health-store';
import { startPipelineThread } from './pipeline-host';
import { RecoveryStore } from './recovery/store';

const MIGRATIONS = join(__dirname, '..', 'migrations');

async function main(): Promise<void> {
  const { logger, metrics, lifecycle, tracing } = runtime;
  const pool = await openServiceDatabase('delivery', config, MIGRATIONS, logger);
  // The delivery pipeline (consumer, fan-out backlog, sender, endpoint health, recovery, retention)
  // runs on a thread of its own, with its own connections (pipeline-host.ts): the delivery log
  // API's work, whichever team's requests cause it, cannot delay any team's deliveries.
  const pipeline = await startPipelineThread(logger);
  // Nor the CPU: on a busy core the pipeline goes before this thread's API work (API_THREAD_NICE).
  yieldToServiceThreads(config.API_THREAD_NICE, logger);
  // Deliveries of one issue to one webhook keep their commit order, each waiting at most this long.
  const store = new DeliveryStore(pool, { orderWaitMs: config.DELIVERY_ORDER_WAIT_MAX_MS });
  const webhookService = grpcWebhookDirectory(config.WEBHOOK_GRPC_ADDR, { caller: 'delivery', signingKey: config.SIGNING_PRIVATE_KEY });
  // Idempotency-Key records of POSTs, and the worker that deletes them once expired.
  const idempotency = serviceIdempotency(pool, config, logger, metrics.registry);
  idempotency.retention.start();

  const app = createApp({
    inputLimits: inputLimitsFrom(config),
    retryAfterSeconds: config.UNAVAILABLE_RETRY_AFTER_SECONDS,
    logger,
    metrics,
    identityIssuers: publicKeysOf(config, IDENTITY_ISSUERS),
    deliveries: store,
    webhooks: webhookService,
    onDeliveryCreated: pipeline.wakeSender,
    pageLimits: listPageLimits(config),
    recoveries: {
      recoveries: new RecoveryStore(pool),
      recovery: { maxEvents: config.DELIVERY_RECOVERY_MAX_EVENTS, defaultPerSecond: config.DELIVERY_RECOVERY_DEFAULT_PER_SECOND },
      onRecoveryCreated: pipeline.wakeRecovery,
    },
    endpointHealth: { health: new HealthStore(pool), disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS },
    idempotency: idempotency.options,
    // Its own database only. NATS is not needed to answer: the consumer waits for it, and an
    // outage of NATS keeps the delivery log serving.
    isReady: readiness({ lifecycle, logger, checks: { database: () => pingDatabase(pool) } }),
  });
  const server = await listen(app, config.HTTP_PORT, config.HOST);
  // The pipeline thread's metrics are served with the service's own.
  const metricsServer = await serveMetrics({ registry: new ThreadedRegistry(metrics.registry, [pipeline.thread]) }, config.METRICS_PORT, config.HOST);

  lifecycle
    .onShutdown('http', () => closeHttpServer(server, config.SHUTDOWN_DRAIN_MS))
    // Events not yet fanned out stay unacked, the backlog and due deliveries stay in PostgreSQL,
    // attempts in flight finish and are recorded (pipeline-thread/pipeline.ts).
    .onShutdown('delivery pipeline', () => pipeline.thread.stop(config.SHUTDOWN_TIMEOUT_MS))
    .onShutdown('idempotency key retention', () => idempotency.retention.stop())
    .onShutdown('grpc clients', () => webhookService.close())
    .onShutdown('database', () => pool.end())
    .onShutdown('metrics', () => closeMetricsServer(metricsServer))
    .onShutdown('tracing', () => tracing.shutdown());
  lifecycle.handleSignals();
  logger.info({ metricsPort: config.METRICS_PORT, httpPort: config.HTTP_PORT }, 'delivery service started');
}

main().catch((error) => exitOnStartupFailure(runtime.logger, error));
