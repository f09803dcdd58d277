#!/usr/bin/env node
// `npm start`: build, bring up PostgreSQL and NATS (unless DATABASE_URL / NATS_URL are set), run
// every service in the foreground with the gateway on http://127.0.0.1:${GATEWAY_PORT:-8080}, and
// stop everything on Ctrl-C / SIGTERM.
import path from 'node:path';

import { removeRuntimeFile, writeRuntimeFile } from '../src/env-file.mjs';
import { provision, useProjectNode } from '../src/provision/index.mjs';
import { ServiceRunner } from '../src/service-runner.mjs';
import { loadDevKeys, loadWiring } from '../src/services.mjs';
import { startStack, worklaneDir } from '../src/stack.mjs';
import { UserError, formatMs, say, signalTools, turboBuild } from '../src/util.mjs';

await useProjectNode();

const START_TIMEOUT_MS = Number(process.env.WORKLANE_START_TIMEOUT_MS || 180_000);
const STOP_TIMEOUT_MS = Number(process.env.WORKLANE_STOP_TIMEOUT_MS || 30_000);
const devDir = path.join(worklaneDir, 'dev');
const servicePidFile = path.join(devDir, 'services.json');

let stack = null;
let runner = null;
let shutdownPromise = null;
let signalCount = 0;

function shutdown(exitCode, reason) {
  shutdownPromise ??= (async () => {
    if (reason) say(reason);
    signalTools('SIGTERM');
    removeRuntimeFile();
    if (runner?.started) say('stopping services...');
    await runner?.stop({ timeoutMs: STOP_TIMEOUT_MS });
    if (stack) {
      const what = [stack.postgres && 'PostgreSQL', stack.nats && 'NATS'].filter(Boolean).join(' and ');
      if (what) say(`stopping ${what}...`);
      await stack.stop();
    }
    if (stack || runner?.started) say('stopped.');
    process.exit(exitCode);
  })().catch((err) => {
    say(`error while stopping: ${err?.stack ?? err}`);
    process.exit(exitCode || 1);
  });
  return shutdownPromise;
}

// A closed terminal or pipe must not crash the runner before it has stopped what it started.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
process.on('exit', () => runner?.kill());

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
      runner?.kill();
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
  const { START_ORDER, stopStages, defaultPorts, serviceEnv } = await loadWiring();
  const ports = defaultPorts(gatewayPort);
  runner = new ServiceRunner({
    startOrder: START_ORDER,
    stopStages: (names) => stopStages(names, (name) => name),
    ports,
    pidFile: servicePidFile,
    startTimeoutMs: START_TIMEOUT_MS,
    onUnexpectedExit: (_name, message) => shutdown(1, message),
  });
  runner.checkBuilt();
  await runner.checkPortsFree();

  // The infrastructure first (PostgreSQL and NATS, ./src/stack.mjs), then the services on it.
  const keys = loadDevKeys();
  stack = await startStack({ name: 'dev', fast: false, handleSignals: false });
  if (shutdownPromise) return;
  say(`PostgreSQL: ${stack.databaseUrl}${stack.postgres ? '' : ' (DATABASE_URL)'}`);
  say(`NATS: ${stack.natsUrl}${stack.nats ? '' : ' (NATS_URL)'}`);

  const envs = serviceEnv({ databaseUrl: stack.databaseUrl, natsUrl: stack.natsUrl, keys, ports });
  const started = Date.now();
  const result = await runner.start(envs);
  if (shutdownPromise) return;
  if (!result.ok) {
    if (result.reason) shutdown(1, result.reason);
    return;
  }
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;

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
