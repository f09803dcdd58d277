// Small helpers shared by the dev runner scripts (plain Node, no dependencies).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of the repository root (two levels above tools/dev/src). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Error whose message is meant for the user as is (no stack trace needed). */
export class UserError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UserError';
  }
}

/** Finds a free TCP port on 127.0.0.1 by binding to port 0. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** True when `port` can be bound on `host` right now. */
export function isPortFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** True when a process with this pid exists. */
export function isAlive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** The command line of a live process as an array of arguments ([] when unknown or gone). */
export function processArgs(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** Finds an executable by name on PATH (env's), then in extraDirs. */
export function which(name, extraDirs = [], env = process.env) {
  const dirs = [...(env.PATH ?? '').split(path.delimiter), ...extraDirs].filter(Boolean);
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Runs a command to completion. Output is captured (and returned) unless stdio is 'inherit'.
 * Resolves {code, signal, stdout, stderr}; never rejects for a non-zero exit.
 */
export function run(cmd, args, options = {}) {
  const { input, ...spawnOptions } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], ...spawnOptions });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    if (child.stdin) {
      if (input !== undefined) child.stdin.end(input);
      else child.stdin.end();
    }
  });
}

/** Like run() but rejects with the command's output when it fails. */
export async function runChecked(cmd, args, options = {}) {
  const result = await run(cmd, args, options);
  if (result.code !== 0) {
    const output = `${result.stdout}${result.stderr}`.trim();
    throw new Error(`${path.basename(cmd)} ${args.join(' ')} failed (${result.signal ?? `exit ${result.code}`})` + (output ? `:\n${output}` : ''));
  }
  return result;
}

/** Waits for a child process to exit; resolves {code, signal}. */
export function waitForExit(child) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Sends `signal`, waits up to `timeoutMs`, then SIGKILLs. Resolves {code, signal, killed}. */
export async function terminate(child, { signal = 'SIGTERM', timeoutMs = 10_000 } = {}) {
  const exited = waitForExit(child);
  if (child.exitCode !== null || child.signalCode !== null) return { ...(await exited), killed: false };
  try {
    child.kill(signal);
  } catch {
    // already gone
  }
  let timer;
  const timedOut = await Promise.race([exited.then(() => false), new Promise((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))]);
  clearTimeout(timer);
  if (timedOut) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  return { ...(await exited), killed: timedOut };
}

/** Waits until pid is gone, up to timeoutMs; returns true when it is gone. */
export async function waitForPidExit(pid, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && !isZombie(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

function isZombie(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

/** Human readable duration. */
export function formatMs(ms) {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Prints `[worklane] message` on stderr. */
export function say(message) {
  process.stderr.write(`[worklane] ${message}\n`);
}

export function signalNumber(signal) {
  return { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal];
}

/** Environment for child tools: the repository's node_modules/.bin first on PATH. */
export function toolEnv(extra = {}) {
  const binDir = path.join(repoRoot, 'node_modules', '.bin');
  const pathParts = (process.env.PATH ?? '').split(path.delimiter).filter((p) => p && p !== binDir);
  return {
    ...process.env,
    TURBO_TELEMETRY_DISABLED: '1',
    ...extra,
    PATH: [binDir, ...pathParts].join(path.delimiter),
  };
}

/** turbo processes started through spawnTurbo() and still running. */
export const activeTools = new Set();

/** Spawns turbo (the repository's, else through npx) in the repository root; returns the child. */
export function spawnTurbo(args, { env = toolEnv(), stdio = ['ignore', 'inherit', 'inherit'] } = {}) {
  const turbo = path.join(repoRoot, 'node_modules', '.bin', 'turbo');
  const [cmd, cmdArgs] = fs.existsSync(turbo) ? [turbo, args] : ['npx', ['turbo', ...args]];
  const child = spawn(cmd, cmdArgs, { cwd: repoRoot, stdio, env });
  activeTools.add(child);
  child.on('exit', () => activeTools.delete(child));
  child.on('error', (err) => {
    activeTools.delete(child);
    say(`could not run turbo: ${err.message}`);
  });
  return child;
}

/** Sends signal to every turbo process still running. */
export function signalTools(signal = 'SIGTERM') {
  for (const child of activeTools) {
    try {
      child.kill(signal);
    } catch {
      // gone
    }
  }
}

/**
 * turbo's build cache, per machine rather than per clone (${XDG_CACHE_HOME:-~/.cache}/worklane/turbo),
 * so that a fresh clone whose sources match an earlier build restores it; TURBO_CACHE_DIR overrides.
 */
export function turboCacheDir(env = process.env) {
  return env.TURBO_CACHE_DIR || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'worklane', 'turbo');
}

/** Runs `turbo run <task>` (build by default) with inherited output; resolves its exit code. */
export async function turboBuild(extraArgs = [], task = 'build') {
  const child = spawnTurbo(['run', task, `--cache-dir=${turboCacheDir()}`, ...extraArgs]);
  const { code, signal } = await waitForExit(child);
  return code ?? (signal ? 1 : 0);
}
