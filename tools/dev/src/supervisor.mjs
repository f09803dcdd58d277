// Runs service processes for `npm start`: prefixed output, unexpected-exit detection, graceful stop.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

import { mainFile } from './services.mjs';
import { UserError, isAlive, processArgs, repoRoot, say, sleep, terminate, waitForPidExit } from './util.mjs';

const COLORS = [36, 33, 35, 32, 34, 91, 96, 93];

/** Fetches url; resolves the HTTP status, or 0 when nothing answered. */
export async function httpStatus(url, timeoutMs = 2_000) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    return res.status;
  } catch {
    return 0;
  }
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
   * Stops every service: SIGTERM, wait up to timeoutMs, then SIGKILL. `force` SIGKILLs at once.
   */
  async stopAll({ timeoutMs = 30_000 } = {}) {
    this.stopping = true;
    await Promise.all(
      [...this.procs.values()].map(async (entry) => {
        const result = await terminate(entry.child, { signal: 'SIGTERM', timeoutMs });
        if (result.killed) say(`${entry.name} did not stop within ${timeoutMs / 1000} s: killed`);
      }),
    );
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
