// What a benchmark ran on, printed with its figures: cores, Node, and the PostgreSQL and NATS
// servers of its stack with the settings that change the figures most.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';

const require = createRequire(import.meta.url);

async function postgresDescription(databaseUrl) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const setting = async (name) => (await client.query(`SELECT current_setting($1) AS value`, [name])).rows[0].value;
    return `PostgreSQL ${await setting('server_version')} (fsync ${await setting('fsync')}, synchronous_commit ${await setting('synchronous_commit')})`;
  } finally {
    await client.end();
  }
}

function natsDescription(bin) {
  if (!bin) return 'NATS (given by NATS_URL)';
  return execFileSync(bin, ['--version'], { encoding: 'utf8' })
    .trim()
    .replace(/^nats-server: v?/, 'NATS ');
}

/** One line: "2 cores (<model>), Node v24…, PostgreSQL 17… (fsync on, …), NATS 2.11…". */
export async function describeMachine(stack) {
  const cpus = os.cpus();
  return [
    `${cpus.length} cores (${cpus[0]?.model?.trim() ?? 'unknown'})`,
    `Node ${process.version}`,
    await postgresDescription(stack.databaseUrl),
    natsDescription(stack.nats?.bin),
  ].join(', ');
}
