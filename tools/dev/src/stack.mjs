// The local infrastructure of `npm start`, `npm test` and the benchmarks: a PostgreSQL server
// (./postgres-server.mjs) and a JetStream-enabled nats-server (./nats-server.mjs), each with its
// data under <repo>/.worklane/<name>/, one stack at a time per directory. The binaries come from
// the one provisioning path, ./provision/. Running the services on top of it is
// ./service-runner.mjs.
//
// Exports:
//   startStack({name, fast?, fresh?, handleSignals?, pgPort?, natsPort?})
//     -> {databaseUrl, natsUrl, dir, postgres, nats, stop()}
//   removeStackDir(dir), stackInUse(dir), worklaneDir
//   startPostgres, startNats, postgresRunAs, relocatedPostgresDir (from the server modules)
import fs from 'node:fs';
import path from 'node:path';

import { clearStaleNats, startNats } from './nats-server.mjs';
import { readPid } from './pid-file.mjs';
import { clearStalePostmaster, postgresRunAs, relocatedPostgresDir, startPostgres } from './postgres-server.mjs';
import { ensurePostgres } from './provision/postgres.mjs';
import { UserError, isAlive, processArgs, repoRoot, say, signalNumber } from './util.mjs';

export { startNats } from './nats-server.mjs';
export { postgresRunAs, relocatedPostgresDir, startPostgres } from './postgres-server.mjs';

export const worklaneDir = path.join(repoRoot, '.worklane');

/**
 * Deletes a stack directory after stopping whatever a killed run left running in it. Refuses
 * (UserError) while a live process holds it.
 */
export async function removeStackDir(dir) {
  if (!fs.existsSync(dir)) return;
  clearStackLock(path.join(dir, 'stack.pid'));
  const pgDirs = [path.join(dir, 'pg'), relocatedPostgresDir(path.join(dir, 'pg'))];
  for (const pgDir of pgDirs) {
    const pgData = path.join(pgDir, 'data');
    if (fs.existsSync(path.join(pgData, 'postmaster.pid'))) {
      const bins = await ensurePostgres();
      await clearStalePostmaster(pgData, bins.pgCtl, postgresRunAs());
    }
  }
  await clearStaleNats(path.join(dir, 'nats', 'nats.pid'), path.join(dir, 'nats', 'jetstream'));
  for (const pgDir of pgDirs) fs.rmSync(pgDir, { recursive: true, force: true });
  fs.rmSync(dir, { recursive: true, force: true });
}

/** True when a live process other than this one holds the stack directory. */
export function stackInUse(dir) {
  try {
    clearStackLock(path.join(dir, 'stack.pid'));
    return false;
  } catch (err) {
    if (err instanceof UserError) return true;
    throw err;
  }
}

function clearStackLock(lockFile) {
  const pid = readPid(lockFile);
  if (pid !== null && pid !== process.pid && isAlive(pid)) {
    const args = processArgs(pid);
    if (args.some((a) => /node/.test(path.basename(a)))) {
      throw new UserError(`another Worklane dev process (pid ${pid}: ${args.join(' ')}) is using ${path.dirname(lockFile)}; stop it first.`);
    }
  }
}

/**
 * Starts PostgreSQL (unless DATABASE_URL is set) and NATS (unless NATS_URL is set) with their files
 * under <repo>/.worklane/<name>/. `fresh` deletes earlier data first; `fast` is for tests only.
 * With handleSignals (default) SIGINT/SIGTERM stop the stack and exit; an exit of the process
 * stops it too (synchronously, best effort).
 */
export async function startStack({ name, fast = false, fresh = false, handleSignals = true, pgPort, natsPort } = {}) {
  if (!name || !/^[\w.-]+$/.test(name)) throw new Error('startStack: a simple name is required');
  const dir = path.join(worklaneDir, name);
  const lockFile = path.join(dir, 'stack.pid');
  clearStackLock(lockFile);
  if (fresh) await removeStackDir(dir);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(lockFile, `${process.pid}\n`);

  let postgres = null;
  let nats = null;
  let stopping = null;

  const stop = () => {
    stopping ??= (async () => {
      await Promise.allSettled([postgres?.stop(), nats?.stop()]);
      if (readPid(lockFile) === process.pid) fs.rmSync(lockFile, { force: true });
      process.off('exit', onExit);
      for (const [sig, fn] of signalHandlers) process.off(sig, fn);
    })();
    return stopping;
  };
  const onExit = () => {
    if (stopping) return;
    nats?.stopSync();
    postgres?.stopSync();
    if (readPid(lockFile) === process.pid) fs.rmSync(lockFile, { force: true });
  };
  process.on('exit', onExit);
  const signalHandlers = [];
  if (handleSignals) {
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
      const fn = () => {
        say(`${sig}: stopping PostgreSQL and NATS...`);
        stop().finally(() => process.exit(128 + signalNumber(sig)));
      };
      signalHandlers.push([sig, fn]);
      process.on(sig, fn);
    }
  }

  try {
    const [pgResult, natsResult] = await Promise.allSettled([
      process.env.DATABASE_URL ? null : startPostgres({ dir: path.join(dir, 'pg'), port: pgPort, fast }),
      process.env.NATS_URL ? null : startNats({ dir: path.join(dir, 'nats'), port: natsPort }),
    ]);
    if (pgResult.status === 'fulfilled') postgres = pgResult.value;
    if (natsResult.status === 'fulfilled') nats = natsResult.value;
    if (pgResult.status === 'rejected') throw pgResult.reason;
    if (natsResult.status === 'rejected') throw natsResult.reason;
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    dir,
    databaseUrl: postgres ? postgres.url : process.env.DATABASE_URL,
    natsUrl: nats ? nats.url : process.env.NATS_URL,
    postgres,
    nats,
    /** Stops whatever this call started (never servers given by DATABASE_URL / NATS_URL). */
    stop,
  };
}
