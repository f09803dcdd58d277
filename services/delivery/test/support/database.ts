import { join } from 'node:path';
import { createPool, migrate, type Pool } from '@worklane/db';
import { createTestDatabase, type TestDatabase } from '@worklane/testing';

/** A fresh database with the delivery service's schema; `drop` ends the pools opened on it, then drops it. */
export interface DeliveryDatabase {
  database: TestDatabase;
  /** A pool on the `delivery` schema, named for the connections' `application_name`. */
  pool(applicationName: string, max?: number): Pool;
  drop(): Promise<void>;
}

export async function createDeliveryDatabase(): Promise<DeliveryDatabase> {
  const database = await createTestDatabase();
  await migrate(database.url, 'delivery', join(__dirname, '..', '..', 'migrations'));
  const pools: Pool[] = [];
  return {
    database,
    pool(applicationName, max = 4) {
      const pool = createPool({ url: database.url, schema: 'delivery', max, applicationName });
      pools.push(pool);
      return pool;
    },
    async drop() {
      await Promise.all(pools.map((pool) => pool.end()));
      await database.drop();
    },
  };
}
