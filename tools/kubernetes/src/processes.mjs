// The daemons the suite starts (etcd, kube-apiserver), each spawned directly (no shell, so the pid
// is the daemon's own), logged to a file, and stopped by that pid in the reverse order of their
// start: the API server before etcd, or it hangs waiting for its store. Cleanup runs on success,
// on failure and on SIGINT/SIGTERM; a last SIGKILL by pid on exit covers anything left.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { isAlive, say, waitForPidExit } from '../../dev/src/util.mjs';

export class Processes {
  /** @type {{name: string, pid: number, child: import('node:child_process').ChildProcess, log: string}[]} */
  running = [];

  constructor(logDir) {
    this.logDir = logDir;
    this.onExit = () => {
      for (const { pid } of this.running) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    };
    process.on('exit', this.onExit);
  }

  /** Starts `cmd args` with output to <logDir>/<name>.log; returns the child. */
  start(name, cmd, args, { env = process.env, cwd } = {}) {
    const log = path.join(this.logDir, `${name}.log`);
    const fd = fs.openSync(log, 'a');
    const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', fd, fd] });
    fs.closeSync(fd);
    const entry = { name, pid: child.pid, child, log };
    this.running.push(entry);
    child.on('error', (error) => fs.appendFileSync(log, `\n[suite] could not start ${cmd}: ${error.message}\n`));
    child.on('exit', () => {
      entry.exited = true;
    });
    return child;
  }

  /** True while the named process runs. */
  alive(name) {
    const entry = this.running.find((p) => p.name === name);
    return Boolean(entry && !entry.exited && isAlive(entry.pid));
  }

  /** The last lines of a process's log, for failure messages. */
  tail(name, lines = 20) {
    const entry = this.running.find((p) => p.name === name);
    if (!entry) return '';
    try {
      return fs.readFileSync(entry.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** Stops one process by its pid: SIGTERM, then SIGKILL after timeoutMs. */
  async stop(entry, timeoutMs = 10_000) {
    if (!entry.exited && isAlive(entry.pid)) {
      try {
        process.kill(entry.pid, 'SIGTERM');
      } catch {
        // gone
      }
      if (!(await waitForPidExit(entry.pid, timeoutMs))) {
        say(`${entry.name} (pid ${entry.pid}) did not stop in ${timeoutMs / 1000} s: killing it`);
        try {
          process.kill(entry.pid, 'SIGKILL');
        } catch {
          // gone
        }
        await waitForPidExit(entry.pid, 5_000);
      }
    }
    this.running = this.running.filter((p) => p !== entry);
  }

  /** Stops the named process with `signal` (SIGKILL after timeoutMs) and forgets it; resolves once it has exited. */
  async stopWith(name, signal, timeoutMs = 10_000) {
    const entry = this.running.find((p) => p.name === name);
    if (!entry) throw new Error(`no process ${name} is running`);
    if (!entry.exited && isAlive(entry.pid)) {
      try {
        process.kill(entry.pid, signal);
      } catch {
        // gone
      }
      if (!(await waitForPidExit(entry.pid, timeoutMs))) {
        say(`${entry.name} (pid ${entry.pid}) did not exit on ${signal} in ${timeoutMs / 1000} s: killing it`);
        try {
          process.kill(entry.pid, 'SIGKILL');
        } catch {
          // gone
        }
        await waitForPidExit(entry.pid, 5_000);
      }
    }
    this.running = this.running.filter((p) => p !== entry);
  }

  /** Stops everything, last started first. */
  async stopAll() {
    for (const entry of [...this.running].reverse()) await this.stop(entry);
    process.off('exit', this.onExit);
  }
}
