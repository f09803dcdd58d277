import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { freePort } from './ports';
import { findExecutable } from './repo';

export interface NatsServer {
  /** nats://127.0.0.1:<port> */
  url: string;
  port: number;
  /** JetStream store directory (kept across restart(), kill() and shutdown()). */
  storeDir: string;
  readonly process: ChildProcess | null;
  logs(): string;
  /** SIGTERM, then start again on the same port with the same store; resolves when ready. */
  restart(): Promise<void>;
  /** SIGTERM and wait (an orderly outage); start() brings it back. */
  shutdown(): Promise<void>;
  /** SIGKILL (a crash); start() brings it back. */
  kill(): Promise<void>;
  /** Starts it again after shutdown() or kill(). */
  start(): Promise<void>;
  /** Stops it for good and deletes its store. */
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
let hooked = false;

/** The nats-server binary: WORKLANE_NATS_SERVER_BIN (set by npm test), .cache/bin or PATH. */
export function natsServerBin(): string {
  const bin = findExecutable('nats-server', process.env.WORKLANE_NATS_SERVER_BIN);
  if (!bin) {
    throw new Error('nats-server not found: run the tests through `npm test` (it sets WORKLANE_NATS_SERVER_BIN), ' + 'or set WORKLANE_NATS_SERVER_BIN to a nats-server binary.');
  }
  return bin;
}

/**
 * Starts an extra nats-server with JetStream on a free port of 127.0.0.1 and its own store, for
 * tests that restart or kill NATS.
 */
export async function startNatsServer(options: { port?: number; jetstream?: boolean; args?: string[]; readyTimeoutMs?: number } = {}): Promise<NatsServer> {
  const bin = natsServerBin();
  const port = options.port ?? (await freePort());
  const storeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-nats-'));
  const readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
  let child: ChildProcess | null = null;
  let log = '';
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }

  async function start(): Promise<void> {
    if (child) return;
    const args = ['-a', '127.0.0.1', '-p', String(port), ...(options.jetstream === false ? [] : ['-js', '-sd', storeDir]), ...(options.args ?? [])];
    const current = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = current;
    live.add(current);
    let output = '';
    const onData = (d: Buffer) => {
      output += d.toString();
      log += d.toString();
    };
    current.stdout?.on('data', onData);
    current.stderr?.on('data', onData);
    current.once('exit', () => {
      live.delete(current);
      if (child === current) child = null;
    });
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => {
        cleanup();
        current.kill('SIGKILL');
        reject(new Error(`nats-server did not get ready within ${readyTimeoutMs} ms:\n${output}`));
      }, readyTimeoutMs);
      const check = () => {
        if (output.includes('Server is ready')) {
          cleanup();
          resolve();
        }
      };
      const onExit = (code: number | null, signal: string | null) => {
        cleanup();
        reject(new Error(`nats-server exited during start (${signal ?? `exit ${code}`}):\n${output}`));
      };
      const onError = (err: Error) => {
        cleanup();
        reject(err);
      };
      function cleanup() {
        clearTimeout(deadline);
        current.stderr?.off('data', check);
        current.stdout?.off('data', check);
        current.off('exit', onExit);
        current.off('error', onError);
      }
      current.stderr?.on('data', check);
      current.stdout?.on('data', check);
      current.once('exit', onExit);
      current.once('error', onError);
      check();
    });
  }

  async function halt(signal: NodeJS.Signals): Promise<void> {
    const current = child;
    if (!current) return;
    const exited = new Promise<void>((resolve) => {
      if (current.exitCode !== null || current.signalCode !== null) resolve();
      else current.once('exit', () => resolve());
    });
    current.kill(signal);
    const timer = setTimeout(() => current.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    if (child === current) child = null;
  }

  await start().catch((err) => {
    fs.rmSync(storeDir, { recursive: true, force: true });
    throw err;
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    get process() {
      return child;
    },
    logs: () => log,
    async restart() {
      await halt('SIGTERM');
      await start();
    },
    shutdown: () => halt('SIGTERM'),
    kill: () => halt('SIGKILL'),
    start,
    async stop() {
      await halt('SIGTERM');
      fs.rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
