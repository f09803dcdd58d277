import { Client } from 'pg';

import { randomId } from './keys';

export interface TestDatabase {
  /** Database name, `wl_test_<random>`. */
  name: string;
  /** DATABASE_URL of the new database. */
  url: string;
  /** Drops the database, disconnecting whoever is still connected. */
  drop(): Promise<void>;
}

function requireServerUrl(explicit?: string): string {
  const url = explicit ?? process.env.DATABASE_URL;
  if (!url) {
    throw new Error(
      'DATABASE_URL is not set: run the tests through `npm test` (which starts PostgreSQL), or set ' + 'DATABASE_URL to a server where this user may CREATE DATABASE.',
    );
  }
  return url;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Creates a fresh, empty database `wl_test_<random>` on the server of DATABASE_URL (or
 * `serverUrl`) and returns its URL.
 */
export async function createTestDatabase(options: { serverUrl?: string; prefix?: string } = {}): Promise<TestDatabase> {
  const serverUrl = requireServerUrl(options.serverUrl);
  const name = `${options.prefix ?? 'wl_test_'}${randomId(8)}`;
  await withClient(serverUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | null = null;
  return {
    name,
    url: url.toString(),
    drop() {
      dropped ??= withClient(serverUrl, async (c) => {
        try {
          await c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
        } catch (err) {
          // PostgreSQL < 13 has no FORCE.
          if ((err as { code?: string }).code !== '42601') throw err;
          await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
          await c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`);
        }
      });
      return dropped;
    },
  };
}
