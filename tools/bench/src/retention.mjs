// The retention part of `npm run bench:delivery`: how fast the delivery log's expired rows are
// removed, against how fast the saturation run wrote them. Every finished delivery the benchmark
// made is moved past the retention window, then the delivery service's own retention code
// (services/delivery/dist/data/retention.js, the loop its job runs) removes them, timed.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const DAY_MS = 86_400_000;

/**
 * Rows (deliveries + attempts) written per second at saturation, and removed per second by a
 * retention pass over everything the benchmark wrote.
 */
export async function measureRetention({ databaseUrl, schema, deliveriesPerSecond, retentionDays = 30, batchSize = 5_000 }) {
  const { createPool } = require('@worklane/db');
  const { createLogger } = require('@worklane/observability');
  const { DeliveryRetention } = require('@worklane/delivery/dist/data/retention.js');
  const pool = createPool({ url: databaseUrl, schema, max: 2, applicationName: 'bench-retention' });
  try {
    const {
      rows: [written],
    } = await pool.query(`SELECT (SELECT count(*) FROM deliveries)::int AS deliveries, (SELECT count(*) FROM delivery_attempts)::int AS attempts`);
    const attemptsPerDelivery = written.deliveries > 0 ? written.attempts / written.deliveries : 0;
    const rowsWrittenPerSecond = deliveriesPerSecond * (1 + attemptsPerDelivery);
    // Past the window, as if the benchmark had run retentionDays + 1 days ago.
    await pool.query(
      `UPDATE deliveries SET completed_at = completed_at - make_interval(days => $1), created_at = created_at - make_interval(days => $1)
       WHERE status <> 'pending'`,
      [retentionDays + 1],
    );
    await pool.query('VACUUM ANALYZE deliveries');
    const retention = new DeliveryRetention({ pool, logger: createLogger('bench', 'silent'), retentionMs: retentionDays * DAY_MS, batchSize, intervalMs: 60_000 });
    const started = process.hrtime.bigint();
    const removed = await retention.removeExpired();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const rowsRemoved = removed.deliveries + removed.attempts;
    return { rowsWrittenPerSecond, rowsRemovedPerSecond: rowsRemoved / seconds, removed, seconds, batchSize };
  } finally {
    await pool.end();
  }
}
