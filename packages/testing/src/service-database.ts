import path from 'node:path';
import { serviceInfo, type ServiceName } from '@worklane/config';
import { createPool, migrate, type Pool } from '@worklane/db';

import { createTestDatabase, type TestDatabase } from './database';
import { repoRoot } from './repo';

/** A test database migrated with one service's schema, and the pools opened on it. */
export interface ServiceDatabase {
  database: TestDatabase;
  /**
   * A pool on the service's schema, named for the connections' `application_name`; `settings` as
   * createPool takes them. Ended by `drop()` (or before, by the test).
   */
  pool(applicationName: string, options?: { max?: number; settings?: Readonly<Record<string, string>> }): Pool;
  /** Ends the pools still open, then drops the database if this helper created it. */
  drop(): Promise<void>;
}

/**
 * Migrates `service`'s schema (its `migrations/` directory) into `database`, or into a fresh test
 * database, as the service does at start: the one way the services' tests set up their database.
 */
export async function createServiceDatabase(service: ServiceName, options: { database?: TestDatabase } = {}): Promise<ServiceDatabase> {
  const schema = serviceInfo(service).schema;
  if (!schema) throw new Error(`the ${service} service has no database`);
  const database = options.database ?? (await createTestDatabase());
  await migrate(database.url, schema, path.join(repoRoot(), 'services', service, 'migrations'));
  const pools: Pool[] = [];
  return {
    database,
    pool(applicationName, { max = 4, settings } = {}) {
      const pool = createPool({ url: database.url, schema, max, applicationName, settings });
      pools.push(pool);
      return pool;
    },
    async drop() {
      await Promise.all(pools.filter((pool) => !pool.ended).map((pool) => pool.end()));
      if (!options.database) await database.drop();
    },
  };
}
