import { config, runtime } from './instrumentation';
import { join } from 'node:path';
import { listPageLimits, publicKeysOf } from '@worklane/config';
import { openServiceDatabase, pingDatabase } from '@worklane/db';
import { closeHttpServer, listen, readiness, inputLimitsFrom, serviceIdempotency } from '@worklane/http';
import { exitOnStartupFailure, closeMetricsServer, serveMetrics, ThreadedRegistry, yieldToServiceThreads } from '@worklane/observability';
import { createApp } from './app';
import { grpcProjectDirectory, grpcTeamMembers, rememberingProjectDirectory } from './clients/directories';
import { IDENTITY_ISSUERS } from './config';
import { IssueStore } from './data/issues';
import { startRelayThread } from './events/relay-host';

const MIGRATIONS = join(__dirname, '..', 'migrations');

async function main(): Promise<void> {
  const { logger, metrics, lifecycle, tracing } = runtime;
  const pool = await openServiceDatabase('issue', config, MIGRATIONS, logger);
  // The outbox relay runs on a thread of its own, with its own connections (relay-host.ts): no
  // burst of API work can delay the publishing of events, whichever team's requests cause it.
  const relay = await startRelayThread({ logger, leaseSeconds: config.OUTBOX_LEASE_SECONDS, handoverMaxLoopUtilization: config.OUTBOX_HANDOVER_MAX_LOOP_UTILIZATION });
  // Nor the CPU: on a busy core the relay goes before this thread's API work (API_THREAD_NICE).
  yieldToServiceThreads(config.API_THREAD_NICE, logger);
  // Idempotency-Key records of POSTs, and the worker that deletes them once expired.
  const idempotency = serviceIdempotency(pool, config, logger, metrics.registry);
  idempotency.retention.start();

  const grpcOptions = { caller: 'issue', signingKey: config.SIGNING_PRIVATE_KEY };
  const projects = grpcProjectDirectory(config.PROJECT_GRPC_ADDR, grpcOptions);
  const members = grpcTeamMembers(config.TOKEN_SERVICE_ADDR, grpcOptions);

  const app = createApp({
    inputLimits: inputLimitsFrom(config),
    retryAfterSeconds: config.UNAVAILABLE_RETRY_AFTER_SECONDS,
    logger,
    metrics,
    identityIssuers: publicKeysOf(config, IDENTITY_ISSUERS),
    // Its creates hand their events to the relay's thread, which publishes each as soon as it commits.
    issues: new IssueStore(pool, relay.publisher, { optimisticUpdateAttempts: config.ISSUE_UPDATE_OPTIMISTIC_ATTEMPTS }),
    projects: rememberingProjectDirectory(projects, config.PROJECT_CACHE_TTL_MS),
    members,
    pageLimits: listPageLimits(config),
    idempotency: idempotency.options,
    // Its own database only. NATS is not needed to answer: events wait in the outbox while it is
    // down (the relay publishes them once it is back), so an outage of NATS keeps the API serving.
    isReady: readiness({ lifecycle, logger, checks: { database: () => pingDatabase(pool) } }),
  });
  const server = await listen(app, config.HTTP_PORT, config.HOST);
  // The relay thread's metrics are served with the service's own.
  const metricsServer = await serveMetrics({ registry: new ThreadedRegistry(metrics.registry, [relay.thread]) }, config.METRICS_PORT, config.HOST);

  lifecycle
    .onShutdown('http', () => closeHttpServer(server, config.SHUTDOWN_DRAIN_MS))
    // Whatever the relay has not published stays in the outbox for the next start or replica.
    .onShutdown('outbox relay', () => relay.thread.stop(config.SHUTDOWN_TIMEOUT_MS))
    .onShutdown('idempotency key retention', () => idempotency.retention.stop())
    .onShutdown('grpc clients', () => {
      projects.close();
      members.close();
    })
    .onShutdown('database', () => pool.end())
    .onShutdown('metrics', () => closeMetricsServer(metricsServer))
    .onShutdown('tracing', () => tracing.shutdown());
  lifecycle.handleSignals();
  logger.info({ metricsPort: config.METRICS_PORT, httpPort: config.HTTP_PORT }, 'issue service started');
}

main().catch((error) => exitOnStartupFailure(runtime.logger, error));
