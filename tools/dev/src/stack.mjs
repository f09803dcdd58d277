// Local infrastructure for `npm start` and `npm test`: a PostgreSQL server and a JetStream-enabled
// nats-server, each with its data under <repo>/.worklane/<name>/. The binaries come from the one
// provisioning path, ./provision/.
//
// Exports:
//   startPostgres({dir, port?, fast?})  -> {url, port, dataDir, stop()}
//   startNats({dir, port?})             -> {url, port, stop(), restart()}
//   startStack({name, fast?, fresh?, handleSignals?}) -> {databaseUrl, natsUrl, dir, stop()}
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ensurePostgres } from './provision/postgres.mjs';
import { GO_TOOLS, ensureGoTool } from './provision/go-tools.mjs';
import {
  UserError,
  freePort,
  isAlive,
  processArgs,
  repoRoot,
  run,
  runChecked,
  say,
  signalNumber,
  sleep,
  terminate,
  waitForPidExit,
  which,
} from './util.mjs';

export const worklaneDir = path.join(repoRoot, '.worklane');

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

// ---------------------------------------------------------------------------------------------
// The unprivileged user that runs PostgreSQL when we are root
// ---------------------------------------------------------------------------------------------

const PG_USER = 'worklane-pg';
let pgUserCache;

function lookupUser(name) {
  const r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) return null;
  return { name, uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** null when not root; else {name, uid, gid} of the user that owns and runs the server. */
export function postgresRunAs() {
  if (!isRoot) return null;
  if (pgUserCache) return pgUserCache;
  let user = lookupUser(PG_USER);
  if (!user && which('useradd', ['/usr/sbin', '/sbin'])) {
    const useradd = which('useradd', ['/usr/sbin', '/sbin']);
    spawnSync(
      useradd,
      ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', PG_USER],
      { stdio: 'ignore' },
    );
    user = lookupUser(PG_USER);
  }
  user ??= lookupUser('nobody');
  if (!user) throw new UserError(`running as root, and neither a user ${PG_USER} nor nobody could be found to run PostgreSQL`);
  pgUserCache = user;
  return user;
}

function asUser(user, options = {}) {
  return user ? { ...options, uid: user.uid, gid: user.gid } : options;
}

function chownTree(dir, user) {
  if (!user) return;
  spawnSync('chown', ['-R', `${user.uid}:${user.gid}`, dir], { stdio: 'ignore' });
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL server
// ---------------------------------------------------------------------------------------------

function tail(file, lines = 30) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function readPid(file) {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').split('\n')[0], 10);
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}

/**
 * A postmaster left behind by a killed run still owns dataDir: stop it. A postmaster.pid whose
 * process is gone (or is some other process that reused the pid) is removed, with stale socket
 * lock files, so that the server can start again.
 */
async function clearStalePostmaster(dataDir, pgCtl, user) {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const pid = readPid(pidFile);
  if (pid !== null && isAlive(pid)) {
    const args = processArgs(pid);
    const isOurs = args.length > 0 && /postgres|postmaster/.test(path.basename(args[0])) && args.includes(dataDir);
    if (isOurs) {
      say(`stopping a PostgreSQL server left running in ${path.relative(repoRoot, dataDir)} (pid ${pid})`);
      const stopped = await run(pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '30', '-s'], asUser(user, { cwd: path.dirname(dataDir) }));
      if (stopped.code !== 0 || !(await waitForPidExit(pid, 30_000))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
        await waitForPidExit(pid, 5_000);
      }
    }
  }
  if (pid !== null && (!isAlive(pid) || !processArgs(pid).includes(dataDir))) {
    fs.rmSync(pidFile, { force: true });
  }
  if (!fs.existsSync(pidFile)) {
    try {
      for (const f of fs.readdirSync(dataDir)) {
        if (f.startsWith('.s.PGSQL.')) fs.rmSync(path.join(dataDir, f), { force: true });
      }
    } catch {
      // no data dir yet
    }
  }
}

/** Can user enter and write dir (which exists)? */
function userReaches(dir, user) {
  const probe = spawnSync('sh', ['-c', 'test -w "$0" && test -x "$0"', dir], asUser(user, { stdio: 'ignore', cwd: '/' }));
  return probe.status === 0;
}

const RELOCATED_ROOT = '/var/tmp/worklane-pg';

/** Where the files of the server meant for `dir` go when its user cannot reach `dir`. */
export function relocatedPostgresDir(dir) {
  const key = crypto.createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 16);
  return path.join(RELOCATED_ROOT, key);
}

/**
 * The directory that holds a server's files. As root, PostgreSQL runs as an unprivileged user
 * (it refuses root), and that user must reach its files: they stay in `dir` when every parent
 * directory lets it through; when the clone sits where only its owner may enter (root's home, a
 * mktemp -d), they go to /var/tmp/worklane-pg/<hash of dir>, owned by that user, with one line
 * saying so.
 */
function postgresHome(dir, user) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!user) return dir;
  chownTree(dir, user);
  if (userReaches(dir, user)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(RELOCATED_ROOT, { recursive: true, mode: 0o711 });
  const root = fs.lstatSync(RELOCATED_ROOT);
  if (!root.isDirectory() || root.uid !== 0 || (root.mode & 0o022) !== 0) {
    throw new UserError(`${RELOCATED_ROOT} must be a directory owned by root and writable only by it; remove it and run again.`);
  }
  const home = relocatedPostgresDir(dir);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  chownTree(home, user);
  if (!userReaches(home, user)) throw new UserError(`${user.name} cannot reach ${home}: set DATABASE_URL to a server of your own.`);
  say(`${user.name} (PostgreSQL's user) cannot enter the directories above ${path.relative(repoRoot, dir)}: its files are in ${home}`);
  return home;
}

function confQuote(value) {
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * Starts (initialising on first use) a PostgreSQL server whose files live in `dir`
 * (data in dir/data, log in dir/postgres.log), listening on 127.0.0.1:`port` (free port when
 * omitted) with trust authentication for user `postgres`. `fast` turns off fsync and friends:
 * for throwaway test data only.
 */
export async function startPostgres({ dir, port, fast = false } = {}) {
  if (!dir) throw new Error('startPostgres: dir is required');
  dir = path.resolve(dir);
  const bins = await ensurePostgres();
  const user = postgresRunAs();
  dir = postgresHome(dir, user);
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');

  await clearStalePostmaster(dataDir, bins.pgCtl, user);

  const versionFile = path.join(dataDir, 'PG_VERSION');
  if (!fs.existsSync(versionFile)) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    const args = ['-D', dataDir, '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--auth=trust'];
    if (fast) args.push('--no-sync');
    const result = await run(bins.initdb, args, asUser(user, { cwd: dir, env: { ...process.env, LC_ALL: 'C' } }));
    if (result.code !== 0) {
      throw new Error(`initdb failed (exit ${result.code}):\n${result.stdout}${result.stderr}`);
    }
    fs.writeFileSync(
      path.join(dataDir, 'pg_hba.conf'),
      '# written by tools/dev/src/stack.mjs: local development only\n' +
        'local all all trust\n' +
        'host  all all 127.0.0.1/32 trust\n',
    );
    fs.appendFileSync(path.join(dataDir, 'postgresql.conf'), "\ninclude_if_exists = 'worklane.conf'\n");
  } else {
    const dataVersion = fs.readFileSync(versionFile, 'utf8').trim();
    const binVersion = (await run(bins.postgres, ['--version'])).stdout.match(/(\d+)(\.\d+)?/)?.[1];
    if (binVersion && dataVersion !== binVersion) {
      throw new UserError(
        `${dataDir} was created by PostgreSQL ${dataVersion} but the server found is ${binVersion}; ` +
          `delete ${dir} to start afresh (its data will be lost).`,
      );
    }
  }

  port ??= await freePort();
  // A unix socket path is limited to ~107 bytes: fall back to a short private directory.
  let socketDir = dataDir;
  let socketTmp = null;
  if (Buffer.byteLength(path.join(dataDir, `.s.PGSQL.${port}.lock`)) > 100) {
    socketTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-pg-'));
    socketDir = socketTmp;
  }
  const settings = {
    port,
    listen_addresses: '127.0.0.1',
    unix_socket_directories: socketDir,
    max_connections: 300,
    ...(fast ? { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' } : {}),
  };
  fs.writeFileSync(
    path.join(dataDir, 'worklane.conf'),
    '# written at each start by tools/dev/src/stack.mjs\n' +
      Object.entries(settings)
        .map(([k, v]) => `${k} = ${confQuote(v)}`)
        .join('\n') +
      '\n',
  );
  chownTree(dir, user);
  if (socketTmp) chownTree(socketTmp, user);

  const started = await run(
    bins.pgCtl,
    ['start', '-D', dataDir, '-l', logFile, '-w', '-t', '60', '-s'],
    asUser(user, { cwd: dir, env: { ...process.env, LC_ALL: 'C' } }),
  );
  if (started.code !== 0) {
    throw new Error(
      `PostgreSQL did not start (pg_ctl exit ${started.code}).\n${started.stdout}${started.stderr}` +
        `\n--- ${logFile} ---\n${tail(logFile)}`,
    );
  }
  const pid = readPid(path.join(dataDir, 'postmaster.pid'));

  let stopping = null;
  const cleanupSocketDir = () => {
    if (socketTmp) fs.rmSync(socketTmp, { recursive: true, force: true });
  };
  const handle = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir,
    pid,
    logFile,
    /** Fast shutdown (pg_ctl stop -m fast), immediate as a fallback. */
    stop() {
      stopping ??= (async () => {
        const opts = asUser(user, { cwd: dir });
        let r = await run(bins.pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '60', '-s'], opts);
        if (r.code !== 0 && pid !== null && isAlive(pid)) {
          r = await run(bins.pgCtl, ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '30', '-s'], opts);
        }
        if (pid !== null && !(await waitForPidExit(pid, 10_000))) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
        cleanupSocketDir();
      })();
      return stopping;
    },
    /** Synchronous best effort, for process 'exit' handlers. */
    stopSync() {
      if (stopping) return;
      stopping = Promise.resolve();
      spawnSync(bins.pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '30', '-s'], asUser(user, { cwd: dir, stdio: 'ignore' }));
      cleanupSocketDir();
    },
  };
  return handle;
}

// ---------------------------------------------------------------------------------------------
// NATS
// ---------------------------------------------------------------------------------------------

async function clearStaleNats(pidFile, storeDir) {
  const pid = readPid(pidFile);
  if (pid === null) return;
  const args = processArgs(pid);
  if (isAlive(pid) && args.length > 0 && path.basename(args[0]).startsWith('nats-server') && args.includes(storeDir)) {
    say(`stopping a nats-server left running on ${path.relative(repoRoot, storeDir)} (pid ${pid})`);
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone
    }
    if (!(await waitForPidExit(pid, 10_000))) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
      await waitForPidExit(pid, 5_000);
    }
  }
  fs.rmSync(pidFile, { force: true });
}

/**
 * Starts nats-server with JetStream, storing in dir/jetstream, logging to dir/nats.log, on
 * 127.0.0.1:`port` (free when omitted). restart() stops it and starts it again on the same port
 * with the same store (for fault tests).
 */
export async function startNats({ dir, port, bin } = {}) {
  if (!dir) throw new Error('startNats: dir is required');
  dir = path.resolve(dir);
  bin ??= (await ensureGoTool(GO_TOOLS.natsServer)).bin;
  const storeDir = path.join(dir, 'jetstream');
  const pidFile = path.join(dir, 'nats.pid');
  const logFile = path.join(dir, 'nats.log');
  fs.mkdirSync(storeDir, { recursive: true });
  await clearStaleNats(pidFile, storeDir);
  port ??= await freePort();

  let child = null;
  let stopping = null;

  async function start() {
    const offset = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
    let stderr = '';
    child = spawn(
      bin,
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, '--pid', pidFile, '-l', logFile],
      // Own process group: a Ctrl-C in the terminal must not kill it before the services drain.
      { detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr.on('data', (d) => (stderr += d));
    const spawnError = new Promise((resolve) => child.once('error', resolve));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const err = await Promise.race([spawnError, sleep(50).then(() => null)]);
      if (err) throw new Error(`could not run ${bin}: ${err.message}`);
      let log = '';
      try {
        const fd = fs.openSync(logFile, 'r');
        const size = fs.fstatSync(fd).size;
        const buf = Buffer.alloc(Math.max(0, size - offset));
        fs.readSync(fd, buf, 0, buf.length, offset);
        fs.closeSync(fd);
        log = buf.toString('utf8');
      } catch {
        // not created yet
      }
      if (log.includes('Server is ready')) return;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`nats-server exited during start (${child.signalCode ?? `exit ${child.exitCode}`}):\n${stderr}${log}`);
      }
      if (Date.now() > deadline) {
        await terminate(child, { timeoutMs: 2_000 });
        throw new Error(`nats-server did not become ready within 30 s:\n${stderr}${log}`);
      }
    }
  }

  async function stopProcess() {
    if (!child) return;
    await terminate(child, { signal: 'SIGTERM', timeoutMs: 10_000 });
    child = null;
  }

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    bin,
    logFile,
    get pid() {
      return child?.pid ?? null;
    },
    async stop() {
      stopping ??= stopProcess();
      return stopping;
    },
    async restart() {
      await stopProcess();
      await start();
    },
    stopSync() {
      if (child && child.exitCode === null && child.signalCode === null) {
        try {
          child.kill('SIGTERM');
        } catch {
          // gone
        }
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The stack
// ---------------------------------------------------------------------------------------------

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
      throw new UserError(
        `another Worklane dev process (pid ${pid}: ${args.join(' ')}) is using ${path.dirname(lockFile)}; stop it first.`,
      );
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
