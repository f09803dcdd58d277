import { config, runtime } from './instrumentation';
import { join } from 'node:path';
import { publicKeysOf } from '@worklane/config';
import { openServiceDatabase, pingDatabase } from '@worklane/db';
import { closeHttpServer, listen, readiness } from '@worklane/http';
import { exitOnStartupFailure, closeMetricsServer, serveMetrics } from '@worklane/observability';
import { createApp } from './app';
import { TRUSTED_PRINCIPALS } from './config';
import { RateLimitSweep } from './data/rate-limit-sweep';
import { TokenChangeRetention } from './data/token-change-retention';

const MIGRATIONS = join(__dirname, '..', 'migrations');

async function main(): Promise<void> {
  const { logger, metrics, lifecycle, tracing } = runtime;
  const pool = await openServiceDatabase('token', config, MIGRATIONS, logger);

  const app = createApp({
    pool,
    logger,
    metrics,
    publicKeys: publicKeysOf(config, TRUSTED_PRINCIPALS),
    sessionLifetime: { idleSeconds: config.SESSION_IDLE_TIMEOUT_SECONDS, absoluteSeconds: config.SESSION_ABSOLUTE_TIMEOUT_SECONDS },
    // Its own database only: it needs nothing else to answer.
    isReady: readiness({ lifecycle, logger, checks: { database: () => pingDatabase(pool) } }),
    tokenCacheMaxTtlMs: config.TOKEN_CACHE_MAX_TTL_MS,
    tokenChangesLeaseMs: config.TOKEN_CHANGES_LEASE_MS,
    maxTokensPerTeam: config.TEAM_MAX_API_TOKENS,
  });
  const rateLimitSweep = new RateLimitSweep({ db: pool, logger, intervalMs: config.RATE_LIMIT_SWEEP_INTERVAL_MS, registry: metrics.registry });
  const tokenChangeRetention = new TokenChangeRetention({ db: pool, logger, retentionSeconds: config.TOKEN_CHANGES_RETENTION_SECONDS, registry: metrics.registry });
  const grpcPort = await app.grpc.listen(config.HOST, config.GRPC_PORT);
  rateLimitSweep.start();
  tokenChangeRetention.start();
  const server = await listen(app.ops, config.HTTP_PORT, config.HOST);
  const metricsServer = await serveMetrics(metrics, config.METRICS_PORT, config.HOST);

  lifecycle
    .onShutdown('grpc', () => app.grpc.shutdown())
    .onShutdown('rate limit sweep', async () => void (await rateLimitSweep.stop()))
    .onShutdown('token change retention', async () => void (await tokenChangeRetention.stop()))
    .onShutdown('http', () => closeHttpServer(server, config.SHUTDOWN_DRAIN_MS))
    .onShutdown('database', () => pool.end())
    .onShutdown('metrics', () => closeMetricsServer(metricsServer))
    .onShutdown('tracing', () => tracing.shutdown());
  lifecycle.handleSignals();
  logger.info({ metricsPort: config.METRICS_PORT, grpcPort, httpPort: config.HTTP_PORT }, 'token service started');
}

main().catch((error) => exitOnStartupFailure(runtime.logger, error));
