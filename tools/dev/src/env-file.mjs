// <repo>/.worklane/dev/runtime.json: how to reach the system that `npm start` is running.
// Written once every service is started, deleted when `npm start` exits. The CLI (`npx worklane`)
// reads it when its variables are not set in the environment:
//   {
//     "pid": 1234,                                   // the npm start runner
//     "startedAt": "2026-01-01T00:00:00.000Z",
//     "databaseUrl": "postgres://postgres@127.0.0.1:5xxxx/postgres",
//     "natsUrl": "nats://127.0.0.1:4xxxx",
//     "tokenServiceAddr": "127.0.0.1:7001",
//     "projectGrpcAddr": "127.0.0.1:7002",
//     "webhookGrpcAddr": "127.0.0.1:7003",
//     "gatewayUrl": "http://127.0.0.1:8080",
//     "cliPrivateKey": "-----BEGIN PRIVATE KEY-----..."
//   }
// and the same as environment variables under "env" (DATABASE_URL, NATS_URL, TOKEN_SERVICE_ADDR,
// PROJECT_GRPC_ADDR, WEBHOOK_GRPC_ADDR, CLI_PRIVATE_KEY, GATEWAY_URL). The file is mode 600: it
// holds the CLI's private key.
import fs from 'node:fs';
import path from 'node:path';

import { isAlive, repoRoot } from './util.mjs';

export function runtimeFile(root = repoRoot) {
  return path.join(root, '.worklane', 'dev', 'runtime.json');
}

export function writeRuntimeFile(info, root = repoRoot) {
  const file = runtimeFile(root);
  const data = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    ...info,
    env: {
      DATABASE_URL: info.databaseUrl,
      NATS_URL: info.natsUrl,
      TOKEN_SERVICE_ADDR: info.tokenServiceAddr,
      PROJECT_GRPC_ADDR: info.projectGrpcAddr,
      WEBHOOK_GRPC_ADDR: info.webhookGrpcAddr,
      CLI_PRIVATE_KEY: info.cliPrivateKey,
      GATEWAY_URL: info.gatewayUrl,
    },
  };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return file;
}

/** Deletes the file if this process wrote it. */
export function removeRuntimeFile(root = repoRoot) {
  const file = runtimeFile(root);
  try {
    const data = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (data.pid === process.pid) fs.rmSync(file, { force: true });
  } catch {
    // absent or unreadable
  }
}

/** The running system's info, or null when none is running (a stale file is ignored). */
export function readRuntimeFile(root = repoRoot) {
  try {
    const data = JSON.parse(fs.readFileSync(runtimeFile(root), 'utf8'));
    return isAlive(data.pid) ? data : null;
  } catch {
    return null;
  }
}
