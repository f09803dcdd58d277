import { config, runtime } from './instrumentation';
import { join } from 'node:path';
import { listPageLimits, publicKeysOf } from '@worklane/config';
import { openServiceDatabase, openWorkerPool, pingDatabase } from '@worklane/db';
import { closeHttpServer, listen, readiness, inputLimitsFrom, serviceIdempotency } from '@worklane/http';
import { connectNats, ensureIssueEventsStream, jetstream, jetstreamManager, registerStreamMetrics, streamLimitsFrom } from '@worklane/messaging';
import { exitOnStartupFailure, promClient, closeMetricsServer, serveMetrics } from '@worklane/observability';
import { createApp } from './app';
import { grpcProjectDirectory, grpcTeamMembers, rememberingProjectDirectory } from './clients/directories';
import { IDENTITY_ISSUERS } from './config';
import { IssueStore } from './data/issues';
import { OutboxRelay, RELAY_SESSION_SETTINGS } from './events/relay';

const MIGRATIONS = join(__dirname, '..', 'migrations');

async function main(): Promise<void> {
  const { logger, metrics, lifecycle, tracing } = runtime;
  const pool = await openServiceDatabase('issue', config, MIGRATIONS, logger);
  // The relay has connections of its own: a burst of slow API requests cannot delay publishing.
  const relayPool = openWorkerPool('issue', config, config.OUTBOX_DATABASE_POOL_MAX, logger, RELAY_SESSION_SETTINGS);
  // Every publish of the relay is a request: no captured stack per request (a failure still says what failed).
  const nats = await connectNats(config.NATS_URL, 'issue', logger, { asyncTraces: false });
  const jsm = await jetstreamManager(nats);
  const declareStream = async () => {
    await ensureIssueEventsStream(jsm, { limits: streamLimitsFrom(config), logger });
  };
  await declareStream();
  registerStreamMetrics(metrics.registry, jsm);

  const published = new promClient.Counter({
    name: 'worklane_outbox_published_total',
    help: 'Outbox events published to JetStream',
    registers: [metrics.registry],
  });
  const deadLettered = new promClient.Counter({
    name: 'worklane_outbox_dead_lettered_total',
    help: 'Outbox events that could never be published, moved to outbox_dead_letters, by reason',
    labelNames: ['reason'],
    registers: [metrics.registry],
  });
  const relay = new OutboxRelay({
    pool: relayPool,
    js: jetstream(nats),
    logger,
    batchSize: config.OUTBOX_BATCH_SIZE,
    pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS,
    leaseSeconds: config.OUTBOX_LEASE_SECONDS,
    markWithinMs: config.OUTBOX_MARK_WITHIN_MS,
    retentionIntervalMs: config.OUTBOX_RETENTION_INTERVAL_MS,
    retentionBatchSize: config.OUTBOX_RETENTION_BATCH_SIZE,
    retentionMs: config.OUTBOX_RETENTION_HOURS * 3_600_000,
    // A NATS server that lost its storage comes back without the stream.
    ensureStream: declareStream,
    onPublished: (count) => published.inc(count),
    maxPayload: () => nats.info?.max_payload ?? 1_048_576,
    deadLetterRetentionMs: config.OUTBOX_DEAD_LETTER_RETENTION_DAYS * 86_400_000,
    onDeadLettered: (reason) => deadLettered.inc({ reason }),
    registry: metrics.registry,
  });
  new promClient.Gauge({
    name: 'worklane_outbox_backlog',
    help: 'Outbox events written but not yet published to JetStream',
    registers: [metrics.registry],
    async collect() {
      // What this replica's relay published and its next claim will mark is on the bus already.
      const { rows } = await pool.query<{ count: number }>({
        name: 'outbox-backlog',
        text: 'SELECT count(*)::int AS count FROM outbox WHERE published_at IS NULL AND NOT (id = ANY($1::uuid[]))',
        values: [relay.publishedUnmarked()],
      });
      this.set(rows[0]?.count ?? 0);
    },
  });
  relay.start();
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
    // Its creates hand their events to this relay, which publishes each as soon as it commits.
    issues: new IssueStore(pool, relay.committedEventPublisher()),
    projects: rememberingProjectDirectory(projects, config.PROJECT_CACHE_TTL_MS),
    members,
    pageLimits: listPageLimits(config),
    idempotency: idempotency.options,
    // Its own database only. NATS is not needed to answer: events wait in the outbox while it is
    // down (the relay publishes them once it is back), so an outage of NATS keeps the API serving.
    isReady: readiness({ lifecycle, logger, checks: { database: () => pingDatabase(pool) } }),
  });
  const server = await listen(app, config.HTTP_PORT, config.HOST);
  const metricsServer = await serveMetrics(metrics, config.METRICS_PORT, config.HOST);

  lifecycle
    .onShutdown('http', () => closeHttpServer(server, config.SHUTDOWN_DRAIN_MS))
    // Whatever the relay has not published stays in the outbox for the next start or replica.
    .onShutdown('outbox relay', () => relay.stop())
    .onShutdown('idempotency key retention', () => idempotency.retention.stop())
    .onShutdown('nats', () => nats.drain())
    .onShutdown('grpc clients', () => {
      projects.close();
      members.close();
    })
    .onShutdown('database', async () => {
      await Promise.all([pool.end(), relayPool.end()]);
    })
    .onShutdown('metrics', () => closeMetricsServer(metricsServer))
    .onShutdown('tracing', () => tracing.shutdown());
  lifecycle.handleSignals();
  logger.info({ metricsPort: config.METRICS_PORT, httpPort: config.HTTP_PORT }, 'issue service started');
}

main().catch((error) => exitOnStartupFailure(runtime.logger, error));
