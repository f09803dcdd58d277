// The service table of docs/architecture.md and the wiring between services.
// packages/testing/src/services.ts mirrors this file (its tests check that both agree).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { repoRoot } from './util.mjs';

/**
 * name, package, default HTTP port, default gRPC port (null: none), database schema (null: no
 * database), and which shared variables the service reads (docs/architecture.md).
 */
export const SERVICES = Object.freeze([
  { name: 'gateway', package: '@worklane/gateway', httpPort: 8080, grpcPort: null, schema: null, nats: false },
  { name: 'token', package: '@worklane/token', httpPort: 9101, grpcPort: 7001, schema: 'token', nats: false },
  { name: 'project', package: '@worklane/project', httpPort: 8081, grpcPort: 7002, schema: 'project', nats: false },
  { name: 'webhook', package: '@worklane/webhook', httpPort: 8082, grpcPort: 7003, schema: 'webhook', nats: false },
  { name: 'issue', package: '@worklane/issue', httpPort: 8083, grpcPort: null, schema: 'issue', nats: true },
  { name: 'delivery', package: '@worklane/delivery', httpPort: 8084, grpcPort: null, schema: 'delivery', nats: true },
  { name: 'console', package: '@worklane/console', httpPort: 8085, grpcPort: null, schema: null, nats: false },
]);

/** Start order: the token service first (everyone authenticates through it), the gateway last. */
export const START_ORDER = Object.freeze(['token', 'project', 'webhook', 'issue', 'delivery', 'console', 'gateway']);

/** Variables passed through to every service when set in the runner's environment. */
export const PASS_THROUGH = Object.freeze([
  'LOG_LEVEL',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'SHUTDOWN_TIMEOUT_MS',
  'DATABASE_POOL_MAX',
  'MIGRATE_ON_START',
]);

export function serviceByName(name) {
  const service = SERVICES.find((s) => s.name === name);
  if (!service) throw new Error(`unknown service ${name}; known: ${SERVICES.map((s) => s.name).join(', ')}`);
  return service;
}

export function mainFile(name, root = repoRoot) {
  return path.join(root, 'services', name, 'dist', 'main.js');
}

/**
 * Default ports ({name: {http, grpc}}); the gateway's HTTP port is `gatewayPort`
 * (GATEWAY_PORT, default 8080).
 */
export function defaultPorts(gatewayPort = Number(process.env.GATEWAY_PORT || 8080)) {
  return Object.fromEntries(
    SERVICES.map((s) => [s.name, { http: s.name === 'gateway' ? Number(gatewayPort) : s.httpPort, grpc: s.grpcPort }]),
  );
}

/**
 * The variables every service shares: where the others are, the keys, the database and NATS.
 * `ports` defaults to defaultPorts(gatewayPort); `host` is where the services are reached.
 */
export function sharedEnv({ databaseUrl, natsUrl, keys, ports, gatewayPort, host = '127.0.0.1', env = process.env }) {
  ports ??= defaultPorts(gatewayPort);
  const http = (name) => `http://${host}:${ports[name].http}`;
  const grpc = (name) => `${host}:${ports[name].grpc}`;
  const shared = {
    IDENTITY_SIGNING_KEY: keys.identitySigningKey,
    WEBHOOK_SECRET_KEY: keys.webhookSecretKey,
    TOKEN_SERVICE_ADDR: grpc('token'),
    PROJECT_GRPC_ADDR: grpc('project'),
    WEBHOOK_GRPC_ADDR: grpc('webhook'),
    PROJECT_SERVICE_URL: http('project'),
    WEBHOOK_SERVICE_URL: http('webhook'),
    ISSUE_SERVICE_URL: http('issue'),
    DELIVERY_SERVICE_URL: http('delivery'),
    CONSOLE_SERVICE_URL: http('console'),
  };
  if (databaseUrl) shared.DATABASE_URL = databaseUrl;
  if (natsUrl) shared.NATS_URL = natsUrl;
  if (env.WEBHOOK_ALLOWED_CIDRS) shared.WEBHOOK_ALLOWED_CIDRS = env.WEBHOOK_ALLOWED_CIDRS;
  for (const name of PASS_THROUGH) if (env[name] !== undefined && env[name] !== '') shared[name] = env[name];
  return shared;
}

/** The variables that make `name` itself: its ports, schema, telemetry name and bind address. */
export function ownEnv(name, { ports, bindHost = '127.0.0.1' }) {
  const service = serviceByName(name);
  const own = { HOST: bindHost, HTTP_PORT: String(ports[name].http), OTEL_SERVICE_NAME: name };
  if (service.grpcPort !== null) own.GRPC_PORT = String(ports[name].grpc);
  if (service.schema !== null) own.DATABASE_SCHEMA = service.schema;
  return own;
}

/**
 * Each service's environment, {name: {VAR: value}}, for a system reached on `host`:
 * HTTP_PORT / GRPC_PORT, DATABASE_URL + DATABASE_SCHEMA (database services), NATS_URL,
 * IDENTITY_SIGNING_KEY, WEBHOOK_SECRET_KEY, TOKEN_SERVICE_ADDR, *_SERVICE_URL, PROJECT_GRPC_ADDR,
 * WEBHOOK_GRPC_ADDR, OTEL_SERVICE_NAME, WEBHOOK_ALLOWED_CIDRS (when set) and PASS_THROUGH.
 */
export function serviceEnv({ databaseUrl, natsUrl, gatewayPort, keys, ports, host = '127.0.0.1', bindHost = '127.0.0.1', env = process.env }) {
  if (!keys?.identitySigningKey || !keys?.webhookSecretKey) throw new Error('serviceEnv: keys are required');
  ports ??= defaultPorts(gatewayPort ?? Number(env.GATEWAY_PORT || 8080));
  const shared = sharedEnv({ databaseUrl, natsUrl, keys, ports, host, env });
  return Object.fromEntries(
    SERVICES.map((s) => {
      const own = ownEnv(s.name, { ports, bindHost });
      const e = { ...shared, ...own };
      if (s.schema === null) delete e.DATABASE_URL;
      return [s.name, e];
    }),
  );
}

export function randomKey() {
  return crypto.randomBytes(32).toString('hex');
}

/**
 * The keys of `npm start`, generated once and kept in <repo>/.worklane/dev-keys.json (mode 600);
 * IDENTITY_SIGNING_KEY / WEBHOOK_SECRET_KEY in the environment win.
 */
export function loadDevKeys(root = repoRoot, env = process.env) {
  const file = path.join(root, '.worklane', 'dev-keys.json');
  let stored = {};
  try {
    stored = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // first run
  }
  if (!stored.identitySigningKey || !stored.webhookSecretKey) {
    stored = {
      identitySigningKey: stored.identitySigningKey || randomKey(),
      webhookSecretKey: stored.webhookSecretKey || randomKey(),
    };
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  }
  return {
    identitySigningKey: env.IDENTITY_SIGNING_KEY || stored.identitySigningKey,
    webhookSecretKey: env.WEBHOOK_SECRET_KEY || stored.webhookSecretKey,
  };
}
