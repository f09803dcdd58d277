#!/usr/bin/env node
// `npm start`: build, bring up PostgreSQL and NATS (unless DATABASE_URL / NATS_URL are set), run
// every service in the foreground with the gateway on http://127.0.0.1:${GATEWAY_PORT:-8080}, and
// stop everything on Ctrl-C / SIGTERM.
import fs from 'node:fs';
import path from 'node:path';

import { removeRuntimeFile, writeRuntimeFile } from '../src/env-file.mjs';
import { loadDevKeys, loadWiring, mainFile } from '../src/services.mjs';
import { provision, useProjectNode } from '../src/provision/index.mjs';
import { startStack, worklaneDir } from '../src/stack.mjs';
import { Supervisor, httpStatus } from '../src/supervisor.mjs';
import {
  UserError,
  formatMs,
  isPortFree,
  repoRoot,
  say,
  signalTools,
  sleep,
  turboBuild,
} from '../src/util.mjs';

await useProjectNode();

const START_TIMEOUT_MS = Number(process.env.WORKLANE_START_TIMEOUT_MS || 180_000);
const STOP_TIMEOUT_MS = Number(process.env.WORKLANE_STOP_TIMEOUT_MS || 30_000);
const devDir = path.join(worklaneDir, 'dev');
const servicePidFile = path.join(devDir, 'services.json');

let stack = null;
let supervisor = null;
let shutdownPromise = null;
let signalCount = 0;

function shutdown(exitCode, reason) {
  shutdownPromise ??= (async () => {
    if (reason) say(reason);
    signalTools('SIGTERM');
    removeRuntimeFile();
    if (supervisor && supervisor.procs.size > 0) {
      say('stopping services...');
      await supervisor.stopAll({ timeoutMs: STOP_TIMEOUT_MS });
    }
    if (stack) {
      const what = [stack.postgres && 'PostgreSQL', stack.nats && 'NATS'].filter(Boolean).join(' and ');
      if (what) say(`stopping ${what}...`);
      await stack.stop();
    }
    if (stack || supervisor) say('stopped.');
    process.exit(exitCode);
  })().catch((err) => {
    say(`error while stopping: ${err?.stack ?? err}`);
    process.exit(exitCode || 1);
  });
  return shutdownPromise;
}

// A closed terminal or pipe must not crash the runner before it has stopped what it started.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
process.on('exit', () => supervisor?.killAll());

let firstSignalAt = 0;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    // One Ctrl-C can arrive two or three times (from the terminal, and forwarded by npm and by
    // the Node re-exec wrapper): only a signal well after the first one counts as a second.
    if (signalCount > 0 && Date.now() - firstSignalAt < 2_000) return;
    signalCount += 1;
    if (signalCount === 1) {
      firstSignalAt = Date.now();
      shutdown(0, `${sig} received: shutting down (again to kill the services at once)`);
    } else {
      say('killing the services');
      supervisor?.killAll();
    }
  });
}

async function main() {
  const gatewayPort = Number(process.env.GATEWAY_PORT || 8080);
  if (!Number.isInteger(gatewayPort) || gatewayPort < 1 || gatewayPort > 65535) {
    throw new UserError(`GATEWAY_PORT must be a port number, got ${JSON.stringify(process.env.GATEWAY_PORT)}`);
  }

  say('provisioning PostgreSQL and nats-server and building (turbo run build)...');
  const toolsReady = provision(['postgres', 'natsServer']);
  toolsReady.catch(() => undefined);
  const buildStarted = Date.now();
  const buildCode = await turboBuild();
  await toolsReady;
  if (shutdownPromise) return;
  if (buildCode !== 0) {
    say(`the build failed (exit ${buildCode}); nothing was started.`);
    process.exit(buildCode || 1);
  }
  say(`build done in ${formatMs(Date.now() - buildStarted)}`);
  const { START_ORDER, defaultPorts, serviceEnv } = await loadWiring();

  const missing = START_ORDER.filter((name) => !fs.existsSync(mainFile(name)));
  if (missing.length > 0) {
    throw new UserError(
      `cannot start: ${missing.map((n) => path.relative(repoRoot, mainFile(n))).join(', ')} ` +
        `${missing.length === 1 ? 'does' : 'do'} not exist after the build. Each service must build to ` +
        'services/<name>/dist/main.js (is it implemented yet, and does its tsconfig.build.json emit to dist?).',
    );
  }

  await Supervisor.clearStale(servicePidFile);
  const ports = defaultPorts(gatewayPort);
  const busy = [];
  for (const name of START_ORDER) {
    for (const [kind, port] of Object.entries(ports[name])) {
      if (port !== null && !(await isPortFree(port))) busy.push(`${port} (${name} ${kind.toUpperCase()})`);
    }
  }
  if (busy.length > 0) {
    throw new UserError(
      `port${busy.length > 1 ? 's' : ''} ${busy.join(', ')} already in use: is another \`npm start\` running?` +
        (busy.some((b) => b.includes('gateway')) ? ' (GATEWAY_PORT moves the gateway)' : ''),
    );
  }

  const keys = loadDevKeys();
  stack = await startStack({ name: 'dev', fast: false, handleSignals: false });
  if (shutdownPromise) return;
  say(`PostgreSQL: ${stack.databaseUrl}${stack.postgres ? '' : ' (DATABASE_URL)'}`);
  say(`NATS: ${stack.natsUrl}${stack.nats ? '' : ' (NATS_URL)'}`);

  const envs = serviceEnv({ databaseUrl: stack.databaseUrl, natsUrl: stack.natsUrl, keys, ports });
  let startupFailure = null;
  supervisor = new Supervisor({
    pidFile: servicePidFile,
    onUnexpectedExit(name, code, signal) {
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const lines = supervisor.lastLines(name);
      const detail = lines.length > 0 ? `\n  last lines of ${name}:\n    ${lines.slice(-15).join('\n    ')}` : '';
      startupFailure = `service ${name} ${how}`;
      shutdown(1, `service ${name} ${how} unexpectedly: shutting everything down.${detail}`);
    },
  });

  const started = Date.now();
  const deadline = started + START_TIMEOUT_MS;
  const waitReady = async (name, url) => {
    for (;;) {
      if (shutdownPromise) return false;
      if ((await httpStatus(url)) === 200) return true;
      if (Date.now() > deadline) return false;
      await sleep(300);
    }
  };

  say('starting token...');
  supervisor.start('token', envs.token);
  if (!(await waitReady('token', `http://127.0.0.1:${ports.token.http}/readyz`))) {
    if (!shutdownPromise) {
      shutdown(1, `token did not answer 200 on http://127.0.0.1:${ports.token.http}/readyz within ${formatMs(START_TIMEOUT_MS)}`);
    }
    return;
  }
  const rest = START_ORDER.filter((n) => n !== 'token');
  say(`starting ${rest.join(', ')}...`);
  for (const name of rest) supervisor.start(name, envs[name]);

  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  if (!(await waitReady('gateway', `${gatewayUrl}/readyz`))) {
    if (shutdownPromise) return;
    const notReady = [];
    for (const name of START_ORDER) {
      const status = await httpStatus(`http://127.0.0.1:${ports[name].http}/readyz`);
      if (status !== 200) notReady.push(`${name} (${status === 0 ? 'no answer' : `HTTP ${status}`})`);
    }
    shutdown(
      1,
      `${gatewayUrl}/readyz did not answer 200 within ${formatMs(START_TIMEOUT_MS)}; ` +
        `not ready: ${notReady.join(', ') || 'none individually (the gateway itself?)'}`,
    );
    return;
  }
  if (shutdownPromise || startupFailure) return;

  writeRuntimeFile({
    databaseUrl: stack.databaseUrl,
    natsUrl: stack.natsUrl,
    tokenServiceAddr: envs.gateway.TOKEN_SERVICE_ADDR,
    projectGrpcAddr: envs.gateway.PROJECT_GRPC_ADDR,
    webhookGrpcAddr: envs.gateway.WEBHOOK_GRPC_ADDR,
    gatewayUrl,
    cliPrivateKey: keys.signing.cli.privateKey,
  });

  const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
  process.stdout.write(
    [
      '',
      bold(`Worklane is ready in ${formatMs(Date.now() - started)}: ${gatewayUrl}/`),
      `  console: ${gatewayUrl}/    API: ${gatewayUrl}/api/v1    readiness: ${gatewayUrl}/readyz`,
      '  create a user, a team, an organization and an API token (in another terminal):',
      `    npx worklane bootstrap --email you@example.com --password 'choose-a-password' \\`,
      `      --team "My team" --organization "My organization" --token-name dev`,
      '  then call the API with `Authorization: Bearer <token>`. Ctrl-C stops everything.',
      '',
    ].join('\n') + '\n',
  );
}

main().catch((err) => {
  const message = err instanceof UserError ? err.message : (err?.stack ?? String(err));
  shutdown(1, message);
});
