// Retention of the delivery log against a real PostgreSQL: a pass removes every delivery finished
// before the window, with its attempts, however many batches that takes, and nothing else.
import { randomUUID } from 'node:crypto';
import type { Pool } from '@worklane/db';
import { createLogger } from '@worklane/observability';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { DeliveryRetention, type Removed } from '../src/data/retention';

const DAY_MS = 86_400_000;
let database: ServiceDatabase;
let pool: Pool;

beforeAll(async () => {
  database = await createServiceDatabase('delivery');
  pool = database.pool('retention-test');
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

/**
 * `count` deliveries of webhook `webhookId`, each with `attempts` attempts, created and (unless
 * pending) finished `ageDays` ago.
 */
async function insertDeliveries(webhookId: number, count: number, options: { ageDays: number; status: 'succeeded' | 'failed' | 'pending'; attempts: number }) {
  await pool.query(
    `WITH made AS (
       INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, status, next_attempt_at, event_created_at, created_at, updated_at, completed_at)
       SELECT gen_random_uuid(), gen_random_uuid(), 'issue.created', 1, $1, '\\x7b7d'::bytea, $3,
              CASE WHEN $3 = 'pending' THEN now() + interval '1 hour' END,
              now() - make_interval(days => $4), now() - make_interval(days => $4), now() - make_interval(days => $4),
              CASE WHEN $3 = 'pending' THEN NULL ELSE now() - make_interval(days => $4) END
       FROM generate_series(1, $2)
       RETURNING id
     )
     INSERT INTO delivery_attempts (delivery_id, number, attempted_at, url, status_code, duration_ms)
     SELECT made.id, n, now(), 'https://receiver.example/hook', 200, 5 FROM made, generate_series(1, $5) AS n`,
    [webhookId, count, options.status, options.ageDays, options.attempts],
  );
}

const countOf = async (sql: string, values: unknown[] = []) => (await pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${sql}`, values)).rows[0]!.count;

it('removes every expired delivery and its attempts in one pass, batch after batch, and keeps the rest', async () => {
  await insertDeliveries(1, 2_500, { ageDays: 40, status: 'succeeded', attempts: 2 });
  await insertDeliveries(1, 500, { ageDays: 31, status: 'failed', attempts: 3 });
  await insertDeliveries(2, 300, { ageDays: 10, status: 'succeeded', attempts: 1 });
  // Still being retried after weeks (a long retry schedule): never removed while pending.
  await insertDeliveries(3, 20, { ageDays: 45, status: 'pending', attempts: 1 });

  // A redelivery made recently of an expired original outlives it.
  const [original] = (await pool.query<{ id: string }>(`SELECT id FROM deliveries WHERE webhook_id = 1 LIMIT 1`)).rows;
  const redelivery = randomUUID();
  await pool.query(
    `INSERT INTO deliveries (id, event_id, event, team_id, webhook_id, body, status, event_created_at, redelivery_of, completed_at)
     VALUES ($1, gen_random_uuid(), 'issue.created', 1, 1, '\\x7b7d'::bytea, 'succeeded', now(), $2, now())`,
    [redelivery, original!.id],
  );

  const batches: Removed[] = [];
  const retention = new DeliveryRetention({
    pool,
    logger: createLogger('delivery', 'silent'),
    retentionMs: 30 * DAY_MS,
    batchSize: 400,
    intervalMs: 60_000,
    onRemoved: (removed) => batches.push(removed),
  });
  const removed = await retention.removeExpired();

  expect(removed).toEqual({ deliveries: 3_000, attempts: 2_500 * 2 + 500 * 3 });
  expect(batches.length).toBeGreaterThanOrEqual(8);
  expect(batches.every((batch) => batch.deliveries <= 400)).toBe(true);
  expect(await countOf(`deliveries WHERE webhook_id = 1 AND id <> $1`, [redelivery])).toBe(0);
  expect(await countOf(`delivery_attempts WHERE NOT EXISTS (SELECT 1 FROM deliveries WHERE deliveries.id = delivery_id)`)).toBe(0);
  expect(await countOf(`deliveries WHERE webhook_id = 2`)).toBe(300);
  expect(await countOf(`delivery_attempts JOIN deliveries ON deliveries.id = delivery_id WHERE webhook_id = 2`)).toBe(300);
  expect(await countOf(`deliveries WHERE webhook_id = 3 AND status = 'pending'`)).toBe(20);
  expect((await pool.query(`SELECT redelivery_of FROM deliveries WHERE id = $1`, [redelivery])).rows).toEqual([{ redelivery_of: null }]);

  // Nothing left to remove: the next pass is a single empty batch.
  expect(await retention.removeExpired()).toEqual({ deliveries: 0, attempts: 0 });
});

it('runs passes on its own once started, and stops', async () => {
  await insertDeliveries(4, 50, { ageDays: 40, status: 'succeeded', attempts: 1 });
  let removedRows = 0;
  const retention = new DeliveryRetention({
    pool,
    logger: createLogger('delivery', 'silent'),
    retentionMs: 30 * DAY_MS,
    batchSize: 1_000,
    intervalMs: 60_000,
    onRemoved: (removed) => {
      removedRows += removed.deliveries;
    },
  });
  retention.start();
  for (let waited = 0; removedRows < 50; waited += 50) {
    if (waited > 10_000) throw new Error('the first pass did not run');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await retention.stop();
  expect(await countOf(`deliveries WHERE webhook_id = 4`)).toBe(0);
});
