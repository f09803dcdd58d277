import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { SERVICES } from '@worklane/config';

import { freePorts, reportsAddressInUse } from './ports';
import { repoRoot, serviceMain } from './repo';

/** Environment additions; `undefined` is ignored, `null` removes the variable from the inherited environment. */
export type EnvInput = Record<string, string | number | boolean | undefined | null>;

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StartServiceOptions {
  /** Wait for `readyPath` to answer 200 before resolving (default true). */
  wait?: boolean;
  /** Path polled by waitReady() (default `/readyz`). */
  readyPath?: string;
  /** How long waitReady() waits (default WORKLANE_TEST_READY_TIMEOUT_MS or 30 s). */
  readyTimeoutMs?: number;
  /** Script to run instead of services/<name>/dist/main.js (for tests of this package). */
  main?: string;
}

export interface ServiceHandle {
  name: string;
  /** http://127.0.0.1:<HTTP_PORT> */
  url: string;
  httpPort: number;
  /** METRICS_PORT: where the service serves Prometheus /metrics. */
  metricsPort: number;
  /** http://127.0.0.1:<METRICS_PORT>: scrape `${metricsUrl}/metrics`. */
  metricsUrl: string;
  /** GRPC_PORT, for services that serve gRPC. */
  grpcPort: number | null;
  /** 127.0.0.1:<GRPC_PORT> or null. */
  grpcAddr: string | null;
  /** The environment the service was started with (on top of the test process's). */
  env: Record<string, string>;
  /** The current child process (a new one after restart()). */
  readonly process: ChildProcess;
  readonly pid: number | undefined;
  /** Resolves when the current process exits. */
  readonly exited: Promise<ExitInfo>;
  /** Everything the service printed so far (stdout and stderr, across restarts). */
  logs(): string;
  /** Writes logs() to stderr. */
  printLogs(): void;
  /** Polls readyPath until it answers 200; rejects (with the logs' tail) on exit or timeout. */
  waitReady(options?: { timeoutMs?: number; path?: string }): Promise<void>;
  /** Sends `signal` (default SIGTERM), waits up to timeoutMs (default 30 s), then SIGKILLs. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<ExitInfo>;
  /** SIGKILL: a crash. */
  kill(): Promise<ExitInfo>;
  /** Stops (when running) and starts again with the same ports and environment; waits until ready. */
  restart(options?: { signal?: NodeJS.Signals; wait?: boolean }): Promise<void>;
}

const MAX_LOG_LINES = 20_000;
/** How many times a service is started on new ports when one chosen for it was taken meanwhile. */
const START_ATTEMPTS = 3;
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // gone
      }
    }
  });
}

function normaliseEnv(env: EnvInput): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== null) out[key] = String(value);
  }
  return out;
}

/** Names whose value is null: removed from the inherited environment. */
function removedNames(env: EnvInput): string[] {
  return Object.entries(env)
    .filter(([, value]) => value === null)
    .map(([key]) => key);
}

function exitInfo(child: ChildProcess): ExitInfo | null {
  if (child.exitCode !== null || child.signalCode !== null) {
    return { code: child.exitCode, signal: child.signalCode };
  }
  return null;
}

function describeExit(info: ExitInfo): string {
  return info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function httpStatus(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer().catch(() => undefined);
    return res.status;
  } catch {
    return 0;
  }
}

/**
 * Starts `node services/<name>/dist/main.js` on free ports (HTTP_PORT, and GRPC_PORT for gRPC
 * services, unless `env` gives them) with `env` over the test process's environment, and waits
 * until /readyz answers 200. The output is kept in memory: printed when the service exits
 * unexpectedly or fails to get ready, streamed live with WORKLANE_TEST_LOGS=1, and available
 * through logs().
 */
export async function startService(name: string, env: EnvInput = {}, options: StartServiceOptions = {}): Promise<ServiceHandle> {
  const main = options.main ?? serviceMain(name);
  if (!fs.existsSync(main)) {
    throw new Error(`${path.relative(repoRoot(), main)} does not exist: build it first (\`npm run build\`, or run the tests with \`npm test\`).`);
  }
  const info = SERVICES.find((s) => s.name === name);
  const given = normaliseEnv(env);
  const removed = removedNames(env);
  const needGrpc = info ? info.grpcPort !== null : given.GRPC_PORT !== undefined;
  const chooses = { http: !given.HTTP_PORT, grpc: needGrpc && !given.GRPC_PORT, metrics: !given.METRICS_PORT };
  let httpPort = 0;
  let grpcPort: number | null = null;
  let metricsPort = 0;
  let ownEnv: Record<string, string> = {};
  let url = '';
  /** Sets the ports (those the caller did not give: free ones) and the environment that names them. */
  async function choosePorts(): Promise<void> {
    const ports = await freePorts(Number(chooses.http) + Number(chooses.grpc) + Number(chooses.metrics));
    httpPort = Number(chooses.http ? ports.shift() : given.HTTP_PORT);
    grpcPort = needGrpc ? Number(chooses.grpc ? ports.shift() : given.GRPC_PORT) : null;
    metricsPort = Number(chooses.metrics ? ports.shift() : given.METRICS_PORT);
    ownEnv = {
      HOST: '127.0.0.1',
      OTEL_SERVICE_NAME: name,
      ...(info?.schema ? { DATABASE_SCHEMA: info.schema } : {}),
      ...given,
      HTTP_PORT: String(httpPort),
      METRICS_PORT: String(metricsPort),
      ...(grpcPort !== null ? { GRPC_PORT: String(grpcPort) } : {}),
    };
    url = `http://127.0.0.1:${httpPort}`;
  }
  await choosePorts();
  const readyPath = options.readyPath ?? '/readyz';
  const readyTimeoutMs = options.readyTimeoutMs ?? Number(process.env.WORKLANE_TEST_READY_TIMEOUT_MS || 30_000);
  const streamLogs = process.env.WORKLANE_TEST_LOGS === '1' || process.env.WORKLANE_TEST_LOGS === 'true';

  const lines: string[] = [];
  /** Lines recorded in all, and how many of them before the current process was spawned. */
  let recorded = 0;
  let recordedAtSpawn = 0;
  let child!: ChildProcess;
  let exited!: Promise<ExitInfo>;
  /** Resolves once the current process's output has been read to its end. */
  let outputEnded!: Promise<void>;
  let expectingExit = false;
  installExitHook();

  const record = (line: string) => {
    lines.push(line);
    recorded += 1;
    if (lines.length > MAX_LOG_LINES) lines.splice(0, lines.length - MAX_LOG_LINES);
    if (streamLogs) process.stderr.write(`[${name}] ${line}\n`);
  };
  /** What the current process printed (at most the MAX_LOG_LINES kept). */
  const outputSinceSpawn = () => (recorded > recordedAtSpawn ? lines.slice(-(recorded - recordedAtSpawn)).join('\n') : '');
  const tailText = (n = 60) => lines.slice(-n).join('\n');

  function spawnProcess(): void {
    expectingExit = false;
    recordedAtSpawn = recorded;
    const processEnv: NodeJS.ProcessEnv = { ...process.env, ...ownEnv };
    delete processEnv.JEST_WORKER_ID;
    for (const name of removed) delete processEnv[name];
    child = spawn(process.execPath, [main], {
      cwd: path.dirname(path.dirname(main)),
      env: processEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    const current = child;
    for (const stream of [current.stdout, current.stderr]) {
      if (stream) readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', record);
    }
    outputEnded = new Promise<void>((resolve) => {
      current.once('close', () => resolve());
      current.once('error', () => resolve());
    });
    exited = new Promise<ExitInfo>((resolve) => {
      current.once('error', (err) => {
        record(`[testing] could not start: ${err.message}`);
        live.delete(current);
        resolve({ code: null, signal: null });
      });
      current.once('exit', (code, signal) => {
        live.delete(current);
        const result = { code, signal };
        if (!expectingExit && !streamLogs) {
          process.stderr.write(`[@worklane/testing] service ${name} ${describeExit(result)} unexpectedly; its output:\n${tailText(200)}\n`);
        }
        resolve(result);
      });
    });
  }

  async function waitReady({ timeoutMs = readyTimeoutMs, path: p = readyPath }: { timeoutMs?: number; path?: string } = {}): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const current = child;
    for (;;) {
      const done = exitInfo(current);
      if (done) {
        throw new Error(`service ${name} ${describeExit(done)} before ${p} answered 200; its output:\n${tailText()}`);
      }
      if ((await httpStatus(`${url}${p}`)) === 200) return;
      if (Date.now() > deadline) {
        throw new Error(`service ${name}: ${url}${p} did not answer 200 within ${timeoutMs} ms; its output:\n${tailText()}`);
      }
      await sleep(100);
    }
  }

  async function stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<ExitInfo> {
    expectingExit = true;
    const current = child;
    const done = exitInfo(current);
    if (done) return done;
    try {
      current.kill(signal);
    } catch {
      // gone
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      record(`[testing] ${name} did not exit within ${timeoutMs} ms of ${signal}: SIGKILL`);
      current.kill('SIGKILL');
    }
    return exited;
  }

  spawnProcess();
  if (options.wait !== false) {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await waitReady();
        break;
      } catch (err) {
        const exitedOnItsOwn = exitInfo(child) !== null;
        await stop('SIGKILL');
        await outputEnded;
        // It exited because another process took one of the ports chosen here between the choice
        // and the listen.
        const portTaken = exitedOnItsOwn && reportsAddressInUse(outputSinceSpawn());
        if (!portTaken || attempt >= START_ATTEMPTS || !(chooses.http || chooses.grpc || chooses.metrics)) throw err;
        record(`[testing] ${name}: a port chosen for it was taken meanwhile; starting again on new ports`);
        await choosePorts();
        spawnProcess();
      }
    }
  }
  return {
    name,
    url,
    httpPort,
    metricsPort,
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    grpcPort,
    grpcAddr: grpcPort !== null ? `127.0.0.1:${grpcPort}` : null,
    env: ownEnv,
    get process() {
      return child;
    },
    get pid() {
      return child.pid;
    },
    get exited() {
      return exited;
    },
    logs: () => lines.join('\n'),
    printLogs: () => {
      process.stderr.write(`--- ${name} (${url}) ---\n${lines.join('\n')}\n`);
    },
    waitReady,
    stop,
    kill: () => stop('SIGKILL'),
    async restart({ signal = 'SIGTERM', wait = true } = {}) {
      await stop(signal);
      record(`[testing] restarting ${name}`);
      spawnProcess();
      if (wait) await waitReady();
    },
  };
}
