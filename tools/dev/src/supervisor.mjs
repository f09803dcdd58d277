// Runs service processes for `npm start`: prefixed output, unexpected-exit detection, graceful stop.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';

import { mainFile } from './services.mjs';
import { UserError, isAlive, processArgs, repoRoot, say, sleep, terminate, waitForPidExit } from './util.mjs';

const COLORS = [36, 33, 35, 32, 34, 91, 96, 93];

/**
 * GETs url on a connection of its own, closed after the answer; resolves the HTTP status, or 0
 * when nothing answered within timeoutMs. (A kept-alive connection would hold each service's
 * shutdown drain open for its whole SHUTDOWN_DRAIN_MS when `npm start` stops it.)
 */
export function httpStatus(url, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', () => resolve(0));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(0));
  });
}

export class Supervisor {
  /**
   * @param {object} options
   * @param {(name: string, code: number|null, signal: string|null) => void} options.onUnexpectedExit
   * @param {string} [options.pidFile] where the services' pids are kept, to clean up after a killed run
   */
  constructor({ onUnexpectedExit, pidFile, color = process.stdout.isTTY } = {}) {
    this.onUnexpectedExit = onUnexpectedExit;
    this.pidFile = pidFile;
    this.color = color;
    this.procs = new Map();
    this.stopping = false;
    this.width = 8;
  }

  prefix(name) {
    const label = name.padEnd(this.width);
    if (!this.color) return `${label} | `;
    const index = [...this.procs.keys()].indexOf(name);
    const color = COLORS[(index < 0 ? this.procs.size : index) % COLORS.length];
    return `\x1b[${color}m${label}\x1b[0m | `;
  }

  /** Starts `node services/<name>/dist/main.js` with env added to ours. */
  start(name, env) {
    const main = mainFile(name);
    if (!fs.existsSync(main)) throw new Error(`${path.relative(repoRoot, main)} does not exist`);
    const child = spawn(process.execPath, [main], {
      cwd: path.join(repoRoot, 'services', name),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Own process group: Ctrl-C reaches only the runner, which stops services in order.
      detached: true,
    });
    const entry = { name, child, lastLines: [], exited: null };
    this.procs.set(name, entry);
    const prefix = this.prefix(name);
    const pipe = (stream, out) => {
      const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
      rl.on('line', (line) => {
        entry.lastLines.push(line);
        if (entry.lastLines.length > 40) entry.lastLines.shift();
        out.write(`${prefix}${line}\n`);
      });
    };
    pipe(child.stdout, process.stdout);
    pipe(child.stderr, process.stderr);
    entry.exited = new Promise((resolve) => {
      child.on('error', (err) => {
        say(`could not start ${name}: ${err.message}`);
        resolve({ code: null, signal: null });
        if (!this.stopping) this.onUnexpectedExit?.(name, null, null);
      });
      child.on('exit', (code, signal) => {
        resolve({ code, signal });
        if (!this.stopping) this.onUnexpectedExit?.(name, code, signal);
      });
    });
    this.savePids();
    return entry;
  }

  isRunning(name) {
    const entry = this.procs.get(name);
    return Boolean(entry && entry.child.exitCode === null && entry.child.signalCode === null);
  }

  lastLines(name) {
    return this.procs.get(name)?.lastLines ?? [];
  }

  savePids() {
    if (!this.pidFile) return;
    const services = Object.fromEntries([...this.procs.values()].filter((e) => e.child.pid).map((e) => [e.name, e.child.pid]));
    fs.mkdirSync(path.dirname(this.pidFile), { recursive: true });
    fs.writeFileSync(this.pidFile, `${JSON.stringify({ runner: process.pid, services })}\n`);
  }

  /**
   * Stops every service: SIGTERM, then SIGKILL to whatever still runs timeoutMs after the stop
   * began. `stages(names)` (lists of the names) stop one after the other, each side by side;
   * without it, all together.
   */
  async stopAll({ timeoutMs = 30_000, stages = (names) => [names] } = {}) {
    this.stopping = true;
    const deadline = Date.now() + timeoutMs;
    for (const stage of stages([...this.procs.keys()])) {
      await Promise.all(
        stage.map(async (name) => {
          const result = await terminate(this.procs.get(name).child, { signal: 'SIGTERM', timeoutMs: Math.max(0, deadline - Date.now()) });
          if (result.killed) say(`${name} did not stop within ${timeoutMs / 1000} s: killed`);
        }),
      );
    }
    if (this.pidFile) fs.rmSync(this.pidFile, { force: true });
  }

  killAll() {
    this.stopping = true;
    for (const entry of this.procs.values()) {
      try {
        entry.child.kill('SIGKILL');
      } catch {
        // gone
      }
    }
  }

  /** Stops services that a killed earlier run left behind (recorded in pidFile). */
  static async clearStale(pidFile) {
    let recorded;
    try {
      recorded = JSON.parse(fs.readFileSync(pidFile, 'utf8'));
    } catch {
      return;
    }
    const runner = recorded.runner;
    if (runner && runner !== process.pid && isAlive(runner) && processArgs(runner).some((a) => /node/.test(path.basename(a)))) {
      throw new UserError(`another \`npm start\` (pid ${runner}) is running the services; stop it first.`);
    }
    for (const [name, pid] of Object.entries(recorded.services ?? {})) {
      if (isAlive(pid) && processArgs(pid).includes(mainFile(name))) {
        say(`stopping ${name} left running by an earlier run (pid ${pid})`);
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // gone
        }
        if (!(await waitForPidExit(pid, 15_000))) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
          await sleep(200);
        }
      }
    }
    fs.rmSync(pidFile, { force: true });
  }
}
