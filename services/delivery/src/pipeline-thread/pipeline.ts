import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openWorkerPool } from '@worklane/db';
import {
  DELIVERY_CONSUMER,
  ISSUE_EVENTS_STREAM,
  connectNats,
  ensureDeliveryConsumer,
  ensureIssueEventsStream,
  ensureWebhookChangesStream,
  jetstream,
  jetstreamManager,
  streamLimitsFrom,
  webhookChangesLimitsFrom,
} from '@worklane/messaging';
import { promClient, type Logger, type ThreadChannel, type Tracing } from '@worklane/observability';
import { CachingResolver, PinnedDispatchers } from '@worklane/webhooks';
import { CachedWebhookDirectory } from '../clients/webhook-cache';
import { WebhookChangeFeed } from '../clients/webhook-changes';
import { grpcWebhookDirectory } from '../clients/webhooks';
import { deliveryLeaseMs, type Config } from '../config';
import { recordDeadLettered } from '../data/dead-letters';
import { DeliveryStore } from '../data/deliveries';
import { EndpointRateStore } from '../data/endpoint-rates';
import { FanOutBacklog } from '../data/fan-out-backlog';
import { DeliveryRetention } from '../data/retention';
import { EventConsumer } from '../events/consumer';
import { FanOutBudget } from '../events/fan-out-budget';
import { FanOutDrainer } from '../events/fan-out-drainer';
import { AutoDisable } from '../health/auto-disable';
import { HealthRecorder } from '../health/health-recorder';
import { HealthStore } from '../health/health-store';
import { createDeliveryMetrics } from '../metrics';
import { PIPELINE_MESSAGES } from '../pipeline-messages';
import { RecoveryStore } from '../recovery/store';
import { RecoveryWorker } from '../recovery/worker';
import { ConnectionPacing } from '../sending/connection-pacing';
import { EndpointRateLimits } from '../sending/rate-limits';
import { DeliverySender } from '../sending/sender';

const VERSION = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The delivery pipeline on its own thread: event consumer, fan-out backlog, sender, endpoint health,
 * recovery and retention, with their own database pool, NATS connection, webhook cache, outbound
 * connections and resolver. Its metrics are served by the service's metrics listener.
 */
export async function runPipeline({ config, logger, tracing, channel }: { config: Config; logger: Logger; tracing: Tracing; channel: ThreadChannel }): Promise<void> {
  const { registry } = channel;
  // Fan-out, sending and retention have connections of their own: a burst of slow delivery log
  // requests cannot delay deliveries.
  const pipelinePool = openWorkerPool('delivery', config, config.DELIVERY_PIPELINE_POOL_MAX, logger);
  // No captured stack per request: every fan-out asks the WEBHOOK_CHANGES stream its position.
  const nats = await connectNats(config.NATS_URL, 'delivery', logger, { asyncTraces: false });
  const jsm = await jetstreamManager(nats);
  const declare = async () => {
    await ensureIssueEventsStream(jsm, { limits: streamLimitsFrom(config), logger });
    await ensureDeliveryConsumer(jsm, { ackWaitMs: config.EVENT_ACK_WAIT_MS });
  };
  await declare();

  // Deliveries of one issue to one webhook keep their commit order, each waiting at most this long.
  const ordering = { orderWaitMs: config.DELIVERY_ORDER_WAIT_MAX_MS };
  const pipelineStore = new DeliveryStore(pipelinePool, ordering);
  // The webhooks' rate limits, stored for the claim as the webhook service states them.
  const rateLimits = new EndpointRateLimits(new EndpointRateStore(pipelinePool), logger);
  const webhookService = grpcWebhookDirectory(config.WEBHOOK_GRPC_ADDR, { caller: 'delivery', signingKey: config.SIGNING_PRIVATE_KEY });
  // The pipeline reads webhooks from memory, kept current by the webhook service's change notices
  // on WEBHOOK_CHANGES (docs/webhook-directory-cache.md); the delivery log API asks the service.
  const webhookChanges = new WebhookChangeFeed({
    js: jetstream(nats),
    jsm: await jetstreamManager(nats, { timeout: config.DELIVERY_WEBHOOK_CACHE_SYNC_TIMEOUT_MS, checkAPI: false }),
    listener: { changed: (change) => webhooks.changed(change), forgetAll: (reason) => webhooks.forgetAll(reason) },
    logger,
    registry: registry,
    syncTimeoutMs: config.DELIVERY_WEBHOOK_CACHE_SYNC_TIMEOUT_MS,
    maxChecksInFlight: config.DELIVERY_WEBHOOK_CACHE_SYNC_CHECKS,
    declare: () => ensureWebhookChangesStream(jsm, webhookChangesLimitsFrom(config), logger),
  });
  const webhooks = new CachedWebhookDirectory({
    directory: webhookService,
    barrier: webhookChanges,
    maxEntries: config.DELIVERY_WEBHOOK_CACHE_MAX_ENTRIES,
    ttlMs: config.DELIVERY_WEBHOOK_CACHE_TTL_MS,
    registry: registry,
  });
  void (async () => {
    for await (const status of nats.status()) if (status.type === 'reconnect') webhookChanges.reconnected();
  })();
  await webhookChanges.start();
  const dispatchers = new PinnedDispatchers({ connectTimeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS, tlsTimeoutMs: config.WEBHOOK_TLS_TIMEOUT_MS });
  // Receiver names are resolved asynchronously (never on libuv's shared thread pool) and cached.
  const resolver = new CachingResolver({
    servers: config.WEBHOOK_DNS_SERVERS,
    timeoutMs: config.DELIVERY_DNS_TIMEOUT_MS,
    maxTtlMs: config.DELIVERY_DNS_MAX_TTL_MS,
    negativeTtlMs: config.DELIVERY_DNS_NEGATIVE_TTL_MS,
    maxEntries: config.DELIVERY_DNS_CACHE_SIZE,
  });
  const deliveryMetrics = createDeliveryMetrics(registry);
  // Endpoint health is written by the pipeline's connections and read by the API's.
  const pipelineHealth = new HealthStore(pipelinePool);
  const healthRecorder = new HealthRecorder(pipelineHealth, logger);
  new promClient.Gauge({
    name: 'worklane_delivery_consumer_pending',
    help: 'ISSUE_EVENTS messages not yet handed to a delivery replica',
    registers: [registry],
    async collect() {
      // A scrape during a NATS outage keeps the last value rather than failing /metrics.
      const info = await jsm.consumers.info(ISSUE_EVENTS_STREAM, DELIVERY_CONSUMER).catch(() => undefined);
      if (info) this.set(info.num_pending);
    },
  });

  // Each team's new receiver connections at a pace (swept with the fan-out budget below).
  const connectionPacing = new ConnectionPacing(config.DELIVERY_TEAM_CONNECTIONS_PER_SECOND, config.DELIVERY_TEAM_CONNECTIONS_BURST);
  const sender = new DeliverySender({
    store: pipelineStore,
    webhooks,
    dispatchers,
    logger,
    metrics: deliveryMetrics,
    allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS,
    lookup: resolver.lookup,
    userAgent: `Worklane-Webhooks/${VERSION}`,
    schedule: config.WEBHOOK_RETRY_SCHEDULE,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    headersTimeoutMs: config.WEBHOOK_HEADERS_TIMEOUT_MS,
    dnsTimeoutMs: config.DELIVERY_DNS_TIMEOUT_MS,
    concurrency: config.DELIVERY_CONCURRENCY,
    perTeamConcurrency: config.DELIVERY_CONCURRENCY_PER_TEAM,
    perWebhookConcurrency: config.DELIVERY_CONCURRENCY_PER_WEBHOOK,
    launchesPerTurn: config.DELIVERY_LAUNCHES_PER_TURN,
    connectionPacing,
    breaker: {
      failureThreshold: config.DELIVERY_BREAKER_FAILURES,
      coolDownMs: config.DELIVERY_BREAKER_COOL_DOWN_MS,
      maxCoolDownMs: config.DELIVERY_BREAKER_MAX_COOL_DOWN_MS,
    },
    deferBatchSize: config.DELIVERY_DEFER_BATCH_SIZE,
    pollIntervalMs: config.DELIVERY_POLL_INTERVAL_MS,
    registry: registry,
    leaseMs: deliveryLeaseMs(config),
    exchange: { responseExcerptBytes: config.DELIVERY_RESPONSE_EXCERPT_BYTES, headersMaxBytes: config.DELIVERY_EXCHANGE_HEADERS_MAX_BYTES },
    health: healthRecorder,
    rateLimits,
  });
  const autoDisable = new AutoDisable({
    pool: pipelinePool,
    health: pipelineHealth,
    webhooks,
    logger,
    noticeAfterMs: config.WEBHOOK_FAILING_NOTICE_AFTER_MS,
    disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
    intervalMs: config.WEBHOOK_HEALTH_CHECK_INTERVAL_MS,
    idleMs: config.DELIVERY_RETENTION_DAYS * 86_400_000,
    onDeliveriesCreated: () => sender.wake(),
    registry: registry,
  });
  const firstDelayMs = (config.WEBHOOK_RETRY_SCHEDULE[0] ?? 0) * 1000;
  // Each team's events create at most its fan-out budget of deliveries; the rest wait in the backlog.
  const budget = new FanOutBudget(config.DELIVERY_FANOUT_PER_TEAM_PER_SECOND, config.DELIVERY_FANOUT_PER_TEAM_BURST);
  // Teams whose buckets are full again are forgotten, so many teams seen once hold no memory.
  const bucketSweeper = setInterval(() => {
    budget.sweep();
    connectionPacing.sweep();
  }, 60_000).unref();
  const backlog = new FanOutBacklog(pipelinePool, pipelineStore);
  deliveryMetrics.observeBacklog(() => backlog.size());
  const drainer = new FanOutDrainer({
    backlog,
    budget,
    logger,
    registry: registry,
    firstDelayMs,
    idleMs: config.DELIVERY_POLL_INTERVAL_MS,
    onDeliveriesCreated: () => sender.wake(),
  });
  const consumer = new EventConsumer({
    js: jetstream(nats),
    store: pipelineStore,
    webhooks,
    logger,
    concurrency: config.EVENT_CONCURRENCY,
    firstDelayMs,
    declare,
    budget,
    backlog,
    onDeliveriesCreated: (teamId) => sender.wake(teamId),
    // Deliveries that may go at once are stored claimed and handed to the sender, with no claim.
    sendAtOnce: sender,
    onQueued: (events) => {
      deliveryMetrics.fanOutQueued.inc(events);
      drainer.wake();
    },
    recordDeadLettered: (event, notice, webhookIds) => recordDeadLettered(pipelinePool, event, notice, webhookIds),
    onTargets: (targets) => rateLimits.observe(targets),
    registry: registry,
    fanOutStatements: config.DELIVERY_FANOUT_STATEMENTS,
    ackFlushWithinMs: config.EVENT_ACK_FLUSH_WITHIN_MS,
  });
  const removedRows = new promClient.Counter({
    name: 'worklane_delivery_retention_removed_total',
    help: 'Rows removed from the delivery log past its retention, by table',
    labelNames: ['table'],
    registers: [registry],
  });
  const retention = new DeliveryRetention({
    pool: pipelinePool,
    logger,
    retentionMs: config.DELIVERY_RETENTION_DAYS * 86_400_000,
    batchSize: config.DELIVERY_RETENTION_BATCH_SIZE,
    intervalMs: config.DELIVERY_RETENTION_INTERVAL_MS,
    registry: registry,
    onRemoved: (removed) => {
      removedRows.inc({ table: 'deliveries' }, removed.deliveries);
      removedRows.inc({ table: 'delivery_attempts' }, removed.attempts);
    },
  });
  // Recovery jobs are stored; any replica steps them, at their webhook's pace.
  const recoveryWorker = new RecoveryWorker({
    store: new RecoveryStore(pipelinePool),
    webhooks,
    logger,
    defaultPerSecond: config.DELIVERY_RECOVERY_DEFAULT_PER_SECOND,
    batchSize: config.DELIVERY_RECOVERY_BATCH_SIZE,
    idleMs: config.DELIVERY_POLL_INTERVAL_MS,
    retentionMs: config.DELIVERY_RETENTION_DAYS * 86_400_000,
    onDeliveriesCreated: () => sender.wake(),
    registry: registry,
  });
  sender.start();
  recoveryWorker.start();
  consumer.start();
  drainer.start();
  retention.start();
  autoDisable.start();
  channel.on(PIPELINE_MESSAGES.deliveryCreated, () => sender.wake());
  channel.on(PIPELINE_MESSAGES.recoveryCreated, () => recoveryWorker.wake());
  channel.onStop(async () => {
    const step = async (name: string, run: () => Promise<unknown> | unknown) => {
      try {
        await run();
      } catch (error) {
        logger.warn({ err: error, step: name }, 'a step of the pipeline’s stop failed');
      }
    };
    // Events not yet fanned out stay unacked and go to another replica.
    await step('event consumer', () => consumer.stop());
    // Events in the backlog stay there for the next drain, by any replica.
    await step('fan-out backlog', async () => {
      clearInterval(bucketSweeper);
      await drainer.stop();
    });
    // Attempts in flight finish and are recorded; everything else stays due in PostgreSQL.
    await step('sender', () => sender.stop());
    await step('endpoint health', async () => {
      await autoDisable.stop();
      await healthRecorder.flush();
    });
    // A job's step is one transaction: one cut short is rolled back and done again by any replica.
    await step('recovery', () => recoveryWorker.stop());
    await step('retention', () => retention.stop());
    await step('webhook changes', () => webhookChanges.stop());
    await step('nats', () => nats.drain());
    await step('outbound connections', () => dispatchers.close());
    await step('resolver', () => resolver.cancel());
    await step('grpc clients', () => webhookService.close());
    await step('database', () => pipelinePool.end());
    await step('tracing', () => tracing.shutdown());
  });
  channel.ready();
}
