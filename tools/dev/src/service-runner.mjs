// Runs Worklane's services on this machine for `npm start`, on top of the infrastructure that
// ./stack.mjs provides: each one as `node services/<name>/dist/main.js` with the environment from
// the service table's wiring (packages/testing/src/services.ts, loaded by ./services.mjs), in the
// table's start order, and waits until the gateway is ready.
import fs from 'node:fs';
import path from 'node:path';

import { mainFile } from './services.mjs';
import { Supervisor, httpStatus } from './supervisor.mjs';
import { UserError, formatMs, isPortFree, repoRoot, say, sleep } from './util.mjs';

export class ServiceRunner {
  /**
   * @param {object} options
   * @param {readonly string[]} options.startOrder the service table's START_ORDER: the first starts alone, the last is the gateway
   * @param {(names: string[]) => string[][]} options.stopStages the service table's stopStages by name: the stages the services stop in
   * @param {Record<string, {http: number, grpc: number|null, metrics: number}>} options.ports
   * @param {string} options.pidFile where the services' pids are kept, to clean up after a killed run
   * @param {number} options.startTimeoutMs how long the whole start may take
   * @param {(name: string, message: string) => void} options.onUnexpectedExit a service exited on its own
   */
  constructor({ startOrder, stopStages, ports, pidFile, startTimeoutMs, onUnexpectedExit }) {
    this.startOrder = startOrder;
    this.stopStages = stopStages;
    this.ports = ports;
    this.pidFile = pidFile;
    this.startTimeoutMs = startTimeoutMs;
    this.stopping = false;
    this.supervisor = new Supervisor({
      pidFile,
      onUnexpectedExit: (name, code, signal) => {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const lines = this.supervisor.lastLines(name);
        const detail = lines.length > 0 ? `\n  last lines of ${name}:\n    ${lines.slice(-15).join('\n    ')}` : '';
        this.failure = `service ${name} ${how}`;
        onUnexpectedExit(name, `service ${name} ${how} unexpectedly: shutting everything down.${detail}`);
      },
    });
  }

  /** Throws a UserError naming every service whose build output is missing. */
  checkBuilt() {
    const missing = this.startOrder.filter((name) => !fs.existsSync(mainFile(name)));
    if (missing.length === 0) return;
    throw new UserError(
      `cannot start: ${missing.map((n) => path.relative(repoRoot, mainFile(n))).join(', ')} ` +
        `${missing.length === 1 ? 'does' : 'do'} not exist after the build. Each service must build to ` +
        'services/<name>/dist/main.js (is it implemented yet, and does its tsconfig.build.json emit to dist?).',
    );
  }

  /** Stops what a killed earlier run left running, then throws a UserError if a port is taken. */
  async checkPortsFree() {
    await Supervisor.clearStale(this.pidFile);
    const busy = [];
    for (const name of this.startOrder) {
      for (const [kind, port] of Object.entries(this.ports[name])) {
        if (port !== null && !(await isPortFree(port))) busy.push(`${port} (${name} ${kind.toUpperCase()})`);
      }
    }
    if (busy.length > 0) {
      throw new UserError(
        `port${busy.length > 1 ? 's' : ''} ${busy.join(', ')} already in use: is another \`npm start\` running?` +
          (busy.some((b) => b.includes('gateway')) ? ' (GATEWAY_PORT moves the gateway)' : ''),
      );
    }
  }

  /** Has a service started? (Only then is there anything to stop.) */
  get started() {
    return this.supervisor.procs.size > 0;
  }

  /**
   * Starts the services: the first of the start order (token, which every other one
   * authenticates through) alone until its /readyz answers 200, then all the others; resolves
   * once every one of them is ready (the gateway's readiness says nothing about the others). Resolves `{ok: true}`, or `{ok: false, reason}` when
   * the start timed out or was stopped (`reason` null then).
   */
  async start(envs) {
    const deadline = Date.now() + this.startTimeoutMs;
    const readyz = (name) => `http://127.0.0.1:${this.ports[name].http}/readyz`;
    const waitReady = async (name) => {
      for (;;) {
        if (this.stopping) return false;
        if ((await httpStatus(readyz(name))) === 200) return true;
        if (Date.now() > deadline) return false;
        await sleep(300);
      }
    };
    const [first, ...rest] = this.startOrder;

    say(`starting ${first}...`);
    this.supervisor.start(first, envs[first]);
    if (!(await waitReady(first))) {
      return { ok: false, reason: this.stopping ? null : `${first} did not answer 200 on ${readyz(first)} within ${formatMs(this.startTimeoutMs)}` };
    }
    say(`starting ${rest.join(', ')}...`);
    for (const name of rest) this.supervisor.start(name, envs[name]);

    const ready = await Promise.all(rest.map(waitReady));
    if (!ready.every(Boolean)) {
      if (this.stopping) return { ok: false, reason: null };
      const notReady = [];
      for (const name of this.startOrder) {
        const status = await httpStatus(readyz(name));
        if (status !== 200) notReady.push(`${name} (${status === 0 ? 'no answer' : `HTTP ${status}`})`);
      }
      return {
        ok: false,
        reason: `not every service answered 200 on /readyz within ${formatMs(this.startTimeoutMs)}; ` + `not ready: ${notReady.join(', ') || 'none any more'}`,
      };
    }
    if (this.failure) return { ok: false, reason: null };
    return { ok: true };
  }

  /**
   * SIGTERM to the services in their stop stages (the gateway and the console first, the token
   * service last), SIGKILL to any still running timeoutMs after the stop began.
   */
  async stop({ timeoutMs }) {
    this.stopping = true;
    await this.supervisor.stopAll({ timeoutMs, stages: this.stopStages });
  }

  /** SIGKILL to every service at once. */
  kill() {
    this.stopping = true;
    this.supervisor.killAll();
  }
}
