// The recovery worker's schedule against a real PostgreSQL: with no unfinished job it has nothing to
// wait for and sleeps its whole poll interval (woken by a new job), instead of looking again at once.
import type { Pool } from '@worklane/db';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { RecoveryStore } from '../src/recovery/store';

jest.setTimeout(60_000);

let database: ServiceDatabase;
let pool: Pool;
let store: RecoveryStore;

beforeAll(async () => {
  database = await createServiceDatabase('delivery');
  pool = database.pool('recovery-idle', { max: 2 });
  store = new RecoveryStore(pool);
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

const insertJob = async (webhookId: number, status: string, nextStepInSeconds: number) => {
  await pool.query(
    `INSERT INTO delivery_recoveries (team_id, webhook_id, since, until, found, pace_per_second, status, next_step_at, finished_at)
     VALUES (1, $1, now() - interval '1 hour', now(), 0, 1, $2, now() + make_interval(secs => $3), CASE WHEN $2 IN ('succeeded', 'failed') THEN now() END)`,
    [webhookId, status, nextStepInSeconds],
  );
};

describe('when the next recovery step is due', () => {
  it('is unknown (the worker idles) with no job at all, and with finished jobs only', async () => {
    expect(await store.msUntilNextStep()).toBeUndefined();
    expect(await store.due(20)).toEqual([]);
    await insertJob(1, 'succeeded', 0);
    await insertJob(2, 'failed', 0);
    expect(await store.msUntilNextStep()).toBeUndefined();
  });

  it('is the time until the soonest unfinished job, and zero for one already due', async () => {
    await insertJob(3, 'running', 120);
    const later = await store.msUntilNextStep();
    expect(later).toBeGreaterThan(60_000);
    expect(later).toBeLessThanOrEqual(120_000);
    await insertJob(4, 'queued', -5);
    expect(await store.msUntilNextStep()).toBe(0);
    expect((await store.due(20)).map((job) => job.webhookId)).toEqual([4]);
  });
});
