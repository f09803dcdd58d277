// The stage breakdown of `npm run bench:delivery`'s latency run: where an event's commit-to-receipt
// time goes, from timestamps the system keeps anyway, plus one the benchmark takes itself:
//   created   the event's outbox row (issue service): its transaction's time, to the microsecond;
//   on bus    the benchmark's own core NATS subscription to the event subjects sees the message
//             (JetStream stored it and routed it on: the relay's publish has reached the server);
//   stored    the delivery row (delivery service): the time of the fan-out statement that wrote it;
//   attempt   the first attempt's start as the sender logged it (delivery_attempts.attempted_at);
//   received  the receiver has read the whole request.
// Every clock is the machine's own (PostgreSQL's now(), the services' and the benchmark's
// Date.now()). Percentiles are per stage: the p99s of the stages do not add up to the end-to-end p99.
import { createRequire } from 'node:module';
import { percentile } from './stats.mjs';
import { nextMessage, startWorker } from './threads.mjs';

const require = createRequire(import.meta.url);

/**
 * Subscribes (core NATS, no JetStream consumer: it takes nothing from the delivery service) to the
 * issue event subjects, on a thread of its own (bus-watch-thread.mjs), and notes when each event id
 * (Nats-Msg-Id) was first seen on the bus. `seen` (event id -> epoch ms) is filled by `close()`.
 */
export async function watchBus(natsUrl) {
  const { worker } = await startWorker('./bus-watch-thread.mjs', { natsUrl });
  const seen = new Map();
  let closing;
  return {
    seen,
    close() {
      closing ??= (async () => {
        const closed = nextMessage(worker, (message) => message.seen);
        worker.postMessage('close');
        try {
          for (const [id, at] of (await closed).seen) seen.set(id, at);
        } finally {
          await worker.terminate();
        }
      })();
      return closing;
    },
  };
}

/** Epoch milliseconds (with microseconds) of a timestamptz column, as a float8. */
const epochMs = (column) => `extract(epoch FROM ${column})::float8 * 1000`;

/** The stages, in order: their names and how each is computed from one delivery's timestamps. */
export const STAGES = [
  ['created -> on bus (issue service: commit, relay, JetStream publish)', (t) => t.onBus - t.created],
  ['on bus -> stored (delivery service: consume, webhooks, fan-out statement start)', (t) => t.stored - t.onBus],
  ['stored -> attempt (fan-out statement and commit, hand-over, launch)', (t) => t.attempted - t.stored],
  ['attempt -> received (signature, POST, receiver)', (t) => t.received - t.attempted],
  ['created -> received (end to end)', (t) => t.received - t.created],
];

/**
 * The timestamps of each delivery in `receipts` (delivery id -> { receivedAt }), read from the
 * issue and delivery databases and the bus watch: one { id, eventId, created, onBus, stored,
 * attempted, received } (epoch ms) per delivery that has every timestamp.
 */
export async function readStageTimes({ issueDb, deliveryDb, receipts, seenOnBus }) {
  const { createPool } = require('@worklane/db');
  const ids = [...receipts.keys()];
  const deliveries = createPool({ url: deliveryDb.DATABASE_URL, schema: deliveryDb.DATABASE_SCHEMA, max: 1, applicationName: 'bench-stages' });
  const issues = createPool({ url: issueDb.DATABASE_URL, schema: issueDb.DATABASE_SCHEMA, max: 1, applicationName: 'bench-stages' });
  try {
    const { rows } = await deliveries.query(
      `SELECT d.id, d.event_id, ${epochMs('d.created_at')} AS stored, ${epochMs('a.attempted_at')} AS attempted
       FROM deliveries AS d LEFT JOIN delivery_attempts AS a ON a.delivery_id = d.id AND a.number = 1
       WHERE d.id = ANY($1::uuid[])`,
      [ids],
    );
    const eventIds = [...new Set(rows.map((row) => row.event_id))];
    const { rows: events } = await issues.query(`SELECT id, ${epochMs('created_at')} AS created FROM outbox WHERE id = ANY($1::uuid[])`, [eventIds]);
    const createdAt = new Map(events.map((event) => [event.id, event.created]));
    const times = [];
    for (const row of rows) {
      const created = createdAt.get(row.event_id);
      const onBus = seenOnBus.get(row.event_id);
      const received = receipts.get(row.id)?.receivedAt;
      if (created === undefined || onBus === undefined || row.attempted === null || received === undefined) continue;
      times.push({ id: row.id, eventId: row.event_id, created, onBus, stored: row.stored, attempted: row.attempted, received });
    }
    return times;
  } finally {
    await Promise.all([deliveries.end(), issues.end()]);
  }
}

/** { deliveries, stages: [{ name, values }] } of a set of deliveries' timestamps; `values` ascending ms. */
export function summarizeStages(times) {
  return {
    deliveries: times.length,
    stages: STAGES.map(([name, of]) => ({ name, values: times.map(of).sort((a, b) => a - b) })),
  };
}

/**
 * The stages of each delivery in `receipts` (delivery id -> { receivedAt }), read from the issue
 * and delivery databases and the bus watch. Resolves to { stages: [{ name, values }], deliveries }
 * where `values` are ascending milliseconds, one per delivery that has every timestamp.
 */
export async function measureStages(sources) {
  return summarizeStages(await readStageTimes(sources));
}

/** The printout's lines: p50, p90, p99 and max of every stage. */
export function formatStages({ deliveries, stages }, title = 'the latency run') {
  const f = (value) => (Number.isFinite(value) ? value.toFixed(2).padStart(7) : '    n/a');
  const width = Math.max(...stages.map((stage) => stage.name.length));
  return [
    `stages of ${title} (${deliveries} deliveries with every timestamp), in ms:`,
    `  ${'stage'.padEnd(width)} ${'p50'.padStart(7)} ${'p90'.padStart(7)} ${'p99'.padStart(7)} ${'max'.padStart(7)}`,
    ...stages.map(
      ({ name, values }) => `  ${name.padEnd(width)} ${f(percentile(values, 50))} ${f(percentile(values, 90))} ${f(percentile(values, 99))} ${f(values[values.length - 1])}`,
    ),
  ];
}
