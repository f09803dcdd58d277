// A local PostgreSQL server for `npm start` and `npm test`, its files under one directory. The
// binaries come from the one provisioning path (./provision/postgres.mjs). As root, the server
// runs as an unprivileged user (PostgreSQL refuses root).
//
// Exports:
//   startPostgres({dir, port?, fast?})  -> {url, port, dataDir, pid, logFile, stop(), stopSync()}
//   clearStalePostmaster(dataDir, pgCtl, user), postgresRunAs(), relocatedPostgresDir(dir)
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { readPid } from './pid-file.mjs';
import { ensurePostgres } from './provision/postgres.mjs';
import { UserError, freePort, isAlive, processArgs, repoRoot, run, say, waitForPidExit, which } from './util.mjs';

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
    spawnSync(useradd, ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', PG_USER], { stdio: 'ignore' });
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
// The server
// ---------------------------------------------------------------------------------------------

function tail(file, lines = 30) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * A postmaster left behind by a killed run still owns dataDir: stop it. A postmaster.pid whose
 * process is gone (or is some other process that reused the pid) is removed, with stale socket
 * lock files, so that the server can start again.
 */
export async function clearStalePostmaster(dataDir, pgCtl, user) {
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
      '# written by tools/dev/src/postgres-server.mjs: local development only\n' + 'local all all trust\n' + 'host  all all 127.0.0.1/32 trust\n',
    );
    fs.appendFileSync(path.join(dataDir, 'postgresql.conf'), "\ninclude_if_exists = 'worklane.conf'\n");
  } else {
    const dataVersion = fs.readFileSync(versionFile, 'utf8').trim();
    const binVersion = (await run(bins.postgres, ['--version'])).stdout.match(/(\d+)(\.\d+)?/)?.[1];
    if (binVersion && dataVersion !== binVersion) {
      throw new UserError(`${dataDir} was created by PostgreSQL ${dataVersion} but the server found is ${binVersion}; ` + `delete ${dir} to start afresh (its data will be lost).`);
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
    '# written at each start by tools/dev/src/postgres-server.mjs\n' +
      Object.entries(settings)
        .map(([k, v]) => `${k} = ${confQuote(v)}`)
        .join('\n') +
      '\n',
  );
  chownTree(dir, user);
  if (socketTmp) chownTree(socketTmp, user);

  const started = await run(bins.pgCtl, ['start', '-D', dataDir, '-l', logFile, '-w', '-t', '60', '-s'], asUser(user, { cwd: dir, env: { ...process.env, LC_ALL: 'C' } }));
  if (started.code !== 0) {
    throw new Error(`PostgreSQL did not start (pg_ctl exit ${started.code}).\n${started.stdout}${started.stderr}` + `\n--- ${logFile} ---\n${tail(logFile)}`);
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
        const r = await run(bins.pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '60', '-s'], opts);
        if (r.code !== 0 && pid !== null && isAlive(pid)) {
          await run(bins.pgCtl, ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '30', '-s'], opts);
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
