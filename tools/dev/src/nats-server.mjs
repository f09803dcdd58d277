// A local JetStream-enabled nats-server for `npm start` and `npm test`, its store and log under one
// directory. The binary comes from the one provisioning path (./provision/go-tools.mjs).
//
// Exports:
//   startNats({dir, port?, bin?})  -> {url, port, bin, logFile, pid, stop(), restart(), stopSync()}
//   clearStaleNats(pidFile, storeDir)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { readPid } from './pid-file.mjs';
import { GO_TOOLS, ensureGoTool } from './provision/go-tools.mjs';
import { freePort, isAlive, processArgs, repoRoot, say, sleep, terminate, waitForPidExit } from './util.mjs';

export async function clearStaleNats(pidFile, storeDir) {
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
