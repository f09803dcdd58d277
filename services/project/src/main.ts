import { config, runtime } from './instrumentation';
import { join } from 'node:path';
import { publicKeysOf } from '@worklane/config';
import { openServiceDatabase, pingDatabase } from '@worklane/db';
import { closeHttpServer, listen, readiness, inputLimitsFrom, serviceIdempotency } from '@worklane/http';
import { exitOnStartupFailure, closeMetricsServer, serveMetrics } from '@worklane/observability';
import { createApp } from './app';
import { TRUSTED_PRINCIPALS, projectLimits } from './config';

const MIGRATIONS = join(__dirname, '..', 'migrations');

async function main(): Promise<void> {
  const { logger, metrics, lifecycle, tracing } = runtime;
  const pool = await openServiceDatabase('project', config, MIGRATIONS, logger);

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
    // Its own database only: it needs nothing else to answer.
    isReady: readiness({ lifecycle, logger, checks: { database: () => pingDatabase(pool) } }),
    limits: projectLimits(config),
    idempotency: idempotency.options,
  });
  const grpcPort = await app.grpc.listen(config.HOST, config.GRPC_PORT);
  const server = await listen(app.http, config.HTTP_PORT, config.HOST);
  const metricsServer = await serveMetrics(metrics, config.METRICS_PORT, config.HOST);

  lifecycle
    .onShutdown('http', () => closeHttpServer(server, config.SHUTDOWN_DRAIN_MS))
    .onShutdown('grpc', () => app.grpc.shutdown())
    .onShutdown('idempotency key retention', () => idempotency.retention.stop())
    .onShutdown('database', () => pool.end())
    .onShutdown('metrics', () => closeMetricsServer(metricsServer))
    .onShutdown('tracing', () => tracing.shutdown());
  lifecycle.handleSignals();
  logger.info({ metricsPort: config.METRICS_PORT, httpPort: config.HTTP_PORT, grpcPort }, 'project service started');
}

main().catch((error) => exitOnStartupFailure(runtime.logger, error));
