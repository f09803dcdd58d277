import { openWorkerPool } from '@worklane/db';
import { connectNats, ensureIssueEventsStream, jetstream, jetstreamManager, registerStreamMetrics, streamLimitsFrom } from '@worklane/messaging';
import { promClient, type Logger, type ThreadChannel, type Tracing } from '@worklane/observability';
import type { Config } from '../config';
import type { OutboxEvent } from '../data/issues';
import { OutboxRelay, RELAY_SESSION_SETTINGS } from './relay';
import { RELAY_MESSAGES } from './relay-messages';

/** How often the relay tells the API thread whether creates may hand their events over. */
const READY_CHECK_MS = 100;

/**
 * The outbox relay and everything it needs, on the relay's own thread: its database pool, its NATS
 * connection and the stream, its metrics (served by the service's metrics listener) and tracing.
 * The API's thread only writes the outbox (and hands over its creates' events, as messages).
 */
export async function runRelayService({ config, logger, tracing, channel }: { config: Config; logger: Logger; tracing: Tracing; channel: ThreadChannel }): Promise<void> {
  const { registry } = channel;
  const pool = openWorkerPool('issue', config, config.OUTBOX_DATABASE_POOL_MAX, logger, RELAY_SESSION_SETTINGS);
  // Every publish of the relay is a request: no captured stack per request (a failure still says what failed).
  const nats = await connectNats(config.NATS_URL, 'issue', logger, { asyncTraces: false });
  const jsm = await jetstreamManager(nats);
  const declareStream = async () => {
    await ensureIssueEventsStream(jsm, { limits: streamLimitsFrom(config), logger });
  };
  await declareStream();
  registerStreamMetrics(registry, jsm);

  const published = new promClient.Counter({ name: 'worklane_outbox_published_total', help: 'Outbox events published to JetStream', registers: [registry] });
  const deadLettered = new promClient.Counter({
    name: 'worklane_outbox_dead_lettered_total',
    help: 'Outbox events that could never be published, moved to outbox_dead_letters, by reason',
    labelNames: ['reason'],
    registers: [registry],
  });
  const relay = new OutboxRelay({
    pool,
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
    registry,
  });
  new promClient.Gauge({
    name: 'worklane_outbox_backlog',
    help: 'Outbox events written but not yet published to JetStream',
    registers: [registry],
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

  const publisher = relay.committedEventPublisher();
  channel.on(RELAY_MESSAGES.committed, (message) => publisher.publish(message.event as OutboxEvent));
  relay.start();
  let ready: boolean | undefined;
  const tellReady = () => {
    const now = publisher.ready();
    if (now === ready) return;
    ready = now;
    channel.post({ kind: RELAY_MESSAGES.ready, ready: now });
  };
  tellReady();
  const readyCheck = setInterval(tellReady, READY_CHECK_MS);

  channel.onStop(async () => {
    clearInterval(readyCheck);
    // Whatever the relay has not published stays in the outbox for the next start or replica.
    await relay.stop();
    await nats.drain().catch((error: unknown) => logger.warn({ err: error }, 'draining the relay’s NATS connection failed'));
    await pool.end();
    await tracing.shutdown();
  });
  channel.ready();
}
