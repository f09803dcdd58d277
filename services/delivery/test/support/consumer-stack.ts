import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Pool } from '@worklane/db';
import { ensureDeliveryConsumer, ensureIssueEventsStream, jetstream, jetstreamManager, type JetStreamManager } from '@worklane/messaging';
import { createLogger } from '@worklane/observability';
import { createServiceDatabase, startNatsServer, type NatsServer, type TestDatabase } from '@worklane/testing';
import type { WebhookDirectory } from '../../src/clients/webhooks';
import { DeliveryStore } from '../../src/data/deliveries';
import { FanOutBacklog } from '../../src/data/fan-out-backlog';
import { EventConsumer, type EventConsumerOptions } from '../../src/events/consumer';
import { FanOutBudget } from '../../src/events/fan-out-budget';

/** An event consumer of its own on a fresh database and NATS server, started; `stop` ends it all. */
export interface ConsumerStack {
  database: TestDatabase;
  pool: Pool;
  nats: NatsServer;
  connection: NatsConnection;
  jsm: JetStreamManager;
  store: DeliveryStore;
  consumer: EventConsumer;
  stop(): Promise<void>;
}

/**
 * Starts an EventConsumer (no fan-out budget, no sender unless `consumer` gives one) reading the
 * webhooks from `webhooks`; `consumer` overrides its other options.
 */
export async function startConsumerStack(options: { name: string; webhooks: WebhookDirectory; poolMax: number; consumer?: Partial<EventConsumerOptions> }): Promise<ConsumerStack> {
  const [deliveryDatabase, nats] = await Promise.all([createServiceDatabase('delivery'), startNatsServer()]);
  const { database } = deliveryDatabase;
  const pool = deliveryDatabase.pool(options.name, { max: options.poolMax });
  const connection = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(connection);
  const declare = async () => {
    await ensureIssueEventsStream(jsm);
    await ensureDeliveryConsumer(jsm);
  };
  await declare();
  const store = new DeliveryStore(pool);
  const consumer = new EventConsumer({
    js: jetstream(connection),
    store,
    webhooks: options.webhooks,
    logger: createLogger('delivery-test', 'warn'),
    concurrency: 16,
    firstDelayMs: 0,
    declare,
    budget: new FanOutBudget(0, 1),
    backlog: new FanOutBacklog(pool, store),
    onDeliveriesCreated: () => {},
    onQueued: () => {},
    recordDeadLettered: async () => 0,
    ...options.consumer,
  });
  consumer.start();
  return {
    database,
    pool,
    nats,
    connection,
    jsm,
    store,
    consumer,
    async stop() {
      await consumer.stop();
      await connection.close();
      await Promise.all([nats.stop(), deliveryDatabase.drop()]);
    },
  };
}
