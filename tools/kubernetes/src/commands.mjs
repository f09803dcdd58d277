// Running the long commands of the cluster phases (image builds, imports, helm): output goes to a
// log file in the run's directory, and a failure carries the log's last lines. Every wait in the
// suite is on a condition, polled, with a bounded timeout.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

import { sleep } from '../../dev/src/util.mjs';

/** The last `lines` lines of a file ('' when it cannot be read). */
export function tailOf(file, lines = 30) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * Runs cmd with stdout and stderr appended to `log` (stdin from `input` or nothing); resolves the
 * exit code. `timeoutMs` bounds it: the command is killed by its pid and the result is 124.
 */
export function runLogged(cmd, args, { log, env = process.env, cwd, timeoutMs = 30 * 60_000, input } = {}) {
  return new Promise((resolve) => {
    fs.appendFileSync(log, `\n$ ${cmd} ${args.join(' ')}\n`);
    const fd = fs.openSync(log, 'a');
    const child = spawn(cmd, args, { env, cwd, stdio: [input === undefined ? 'ignore' : 'pipe', fd, fd] });
    fs.closeSync(fd);
    if (input !== undefined) {
      if (typeof input === 'string' || Buffer.isBuffer(input)) child.stdin.end(input);
      else input.pipe(child.stdin);
    }
    const timer = setTimeout(() => {
      fs.appendFileSync(log, `\n[suite] ${cmd} did not finish in ${timeoutMs / 1000} s: killing pid ${child.pid}\n`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      fs.appendFileSync(log, `\n[suite] could not start ${cmd}: ${error.message}\n`);
      resolve(127);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(signal === 'SIGKILL' ? 124 : (code ?? 1));
    });
  });
}

/** runLogged, rejecting with the log's tail when the command fails. */
export async function runLoggedChecked(cmd, args, options) {
  const code = await runLogged(cmd, args, options);
  if (code !== 0) throw new Error(`${cmd.split('/').pop()} ${args.slice(0, 4).join(' ')}... failed (exit ${code}); its log, ${options.log}, ends:\n${tailOf(options.log)}`);
}

/**
 * Polls probe() every intervalMs until it returns true; anything else it returns (or throws) is
 * kept as the last answer for the timeout's message.
 */
export async function waitUntil(what, probe, { timeoutMs, intervalMs = 1_000 }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last;
    try {
      const answer = await probe();
      if (answer === true) return;
      last = answer;
    } catch (error) {
      last = error?.message ?? String(error);
    }
    if (Date.now() >= deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s (last answer: ${String(last).slice(0, 2000)})`);
    await sleep(intervalMs);
  }
}

/** Runs fn up to `attempts` times, for set-up steps that can fail for passing reasons (never for assertions). */
export async function retrySetUp(what, fn, { attempts = 3, say = () => {} } = {}) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt >= attempts) throw error;
      say(`${what} failed (attempt ${attempt} of ${attempts}), trying again: ${String(error?.message ?? error).split('\n')[0]}`);
    }
  }
}
