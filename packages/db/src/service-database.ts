import type pg from 'pg';
import { migrate } from './migrate';
import { createPool } from './pool';

/** The database settings every service with tables reads (`databaseSchema()` of @worklane/config). */
export interface ServiceDatabaseConfig {
  DATABASE_URL: string;
  DATABASE_SCHEMA: string;
  DATABASE_POOL_MAX: number;
  MIGRATE_ON_START: boolean;
}

/**
 * A service's pool on its own schema, after applying its migrations when MIGRATE_ON_START is
 * set (otherwise `worklane migrate` or the chart's migration Job has done so).
 */
export async function openServiceDatabase(
  service: string,
  config: ServiceDatabaseConfig,
  migrationsDirectory: string,
  logger?: { warn(object: object, message: string): void },
): Promise<pg.Pool> {
  if (config.MIGRATE_ON_START) await migrate(config.DATABASE_URL, config.DATABASE_SCHEMA, migrationsDirectory);
  return createPool({
    url: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    max: config.DATABASE_POOL_MAX,
    applicationName: service,
    onIdleClientError: (error) => logger?.warn({ err: error }, 'an idle database connection broke; it will be replaced'),
  });
}

/**
 * A second pool on the service's schema for its background work (relaying events, sending
 * deliveries), so API requests, however many and slow, never leave that work waiting for a
 * connection, nor it them.
 */
export function openWorkerPool(
  service: string,
  config: Omit<ServiceDatabaseConfig, 'MIGRATE_ON_START' | 'DATABASE_POOL_MAX'>,
  max: number,
  logger?: { warn(object: object, message: string): void },
  /** Session settings of the work's connections (PoolOptions.settings). */
  settings?: Readonly<Record<string, string>>,
): pg.Pool {
  return createPool({
    url: config.DATABASE_URL,
    schema: config.DATABASE_SCHEMA,
    max,
    settings,
    applicationName: `${service}-worker`,
    onIdleClientError: (error) => logger?.warn({ err: error }, 'an idle database connection of the background work broke; it will be replaced'),
  });
}
