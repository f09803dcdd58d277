import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

export interface MigrationResult {
  applied: string[];
}

/** A stable 63-bit advisory lock key per schema, so replicas starting together migrate once. */
const lockKey = (schema: string) => createHash('sha256').update(`worklane:migrate:${schema}`).digest().readBigInt64BE(0).toString();

/**
 * Applies the `NNN_name.sql` files of `directory` that the schema has not seen yet, each in its
 * own transaction, in name order. Safe to run from many replicas at once.
 */
export async function migrate(databaseUrl: string, schema: string, directory: string): Promise<MigrationResult> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name: ${schema}`);
  const files = readdirSync(directory)
    .filter((file) => /^\d+_[\w-]+\.sql$/.test(file))
    .sort();
  const client = new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [lockKey(schema)]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ version: string }>(`SELECT version FROM ${schema}.schema_migrations`)).rows.map((row) => row.version));
    for (const file of files) {
      if (done.has(file)) continue;
      await client.query('BEGIN');
      try {
        await client.query(readFileSync(join(directory, file), 'utf8'));
        await client.query(`INSERT INTO ${schema}.schema_migrations (version) VALUES ($1)`, [file]);
        await client.query('COMMIT');
        applied.push(file);
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${schema}/${file} failed: ${(error as Error).message}`, { cause: error });
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [lockKey(schema)]).catch(() => {});
    await client.end();
  }
  return { applied };
}
