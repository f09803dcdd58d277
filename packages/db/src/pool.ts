import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    // Ids are bigserial; they stay far below 2^53, so they are plain numbers in JSON.
    if (oid === INT8_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

export interface PoolOptions {
  url: string;
  /** The service's own schema; it is the only one on the search path. */
  schema: string;
  max?: number;
  applicationName: string;
  /** Told when an idle pooled connection breaks (server restart, failover, terminated backend). */
  onIdleClientError?: (error: Error) => void;
  /**
   * Settings every session of the pool starts with (`synchronous_commit: 'off'`, say), besides the
   * search path and over SESSION_DEFAULTS.
   */
  settings?: Readonly<Record<string, string>>;
}

/**
 * What every session starts with unless `settings` says otherwise.
 *
 * jit=off: PostgreSQL compiles a statement with LLVM once its estimated cost passes jit_above_cost.
 * Worklane's statements are short and run thousands of times a second; when a backlog makes a
 * planner estimate large (the delivery claim with one team's thousands of pending deliveries),
 * compiling took 1.3 to 4.2 s of CPU per execution, while the statement itself ran in under
 * 100 ms, and it stalled every team's deliveries. Turned off per session, so a server whose
 * operator left JIT on (its default) behaves the same.
 */
export const SESSION_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({ jit: 'off' });

/** The startup `options` of a pool's sessions: the search path, then each setting as `-c name=value`. */
export function sessionOptions(schema: string, settings: Readonly<Record<string, string>> = {}): string {
  const merged = { ...SESSION_DEFAULTS, ...settings };
  return [`-c search_path=${schema}`, ...Object.entries(merged).map(([name, value]) => `-c ${name}=${value}`)].join(' ');
}

/** A connection pool whose sessions see only the service's schema. */
export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    application_name: options.applicationName,
    options: sessionOptions(options.schema, options.settings),
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 5_000,
    types,
  });
  // Unhandled, this event would crash the process; the pool has already dropped the broken
  // client and the next query opens a fresh connection.
  pool.on('error', options.onIdleClientError ?? (() => {}));
  return pool;
}

export async function pingDatabase(pool: Queryable): Promise<boolean> {
  await pool.query('SELECT 1');
  return true;
}

/**
 * More work to commit together with a write: it runs in the write's transaction, after the write
 * (with what it wrote), and rolls the write back by throwing. The record of an idempotent
 * request's answer is one (@worklane/http's idempotency).
 */
export type InSameTransaction<T> = (client: Queryable, written: T) => Promise<void>;

/** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
export async function withTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as { code?: string; constraint?: string };
  return pgError?.code === '23505' && (constraint === undefined || pgError.constraint === constraint);
}

/**
 * A timestamptz column as ISO 8601 UTC with microseconds (`2026-01-15T09:00:00.123456Z`),
 * formatted by PostgreSQL so the microseconds never pass through a JavaScript Date.
 */
export function timestamp(column: string, alias = column.split('.').pop()): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ${alias}`;
}
