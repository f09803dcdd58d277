// The service table of docs/architecture.md and the wiring between services: one definition for
// `npm start` (tools/dev loads it from this package's build) and for the tests' systems.

import { METRICS_PORTS, PRINCIPALS, type Principal } from '@worklane/config';
import type { SigningKeyPair } from './keys';

export type ServiceName = 'gateway' | 'token' | 'project' | 'webhook' | 'issue' | 'delivery' | 'console';

export interface ServiceInfo {
  name: ServiceName;
  package: string;
  httpPort: number;
  grpcPort: number | null;
  /** METRICS_PORT: Prometheus /metrics, on a port of its own (never the API port). */
  metricsPort: number;
  /** Database schema; null for services without a database. */
  schema: string | null;
  nats: boolean;
}

export const SERVICES: readonly ServiceInfo[] = Object.freeze([
  { name: 'gateway', package: '@worklane/gateway', httpPort: 8080, grpcPort: null, metricsPort: METRICS_PORTS.gateway!, schema: null, nats: false },
  { name: 'token', package: '@worklane/token', httpPort: 9101, grpcPort: 7001, metricsPort: METRICS_PORTS.token!, schema: 'token', nats: false },
  { name: 'project', package: '@worklane/project', httpPort: 8081, grpcPort: 7002, metricsPort: METRICS_PORTS.project!, schema: 'project', nats: false },
  { name: 'webhook', package: '@worklane/webhook', httpPort: 8082, grpcPort: 7003, metricsPort: METRICS_PORTS.webhook!, schema: 'webhook', nats: false },
  { name: 'issue', package: '@worklane/issue', httpPort: 8083, grpcPort: null, metricsPort: METRICS_PORTS.issue!, schema: 'issue', nats: true },
  { name: 'delivery', package: '@worklane/delivery', httpPort: 8084, grpcPort: null, metricsPort: METRICS_PORTS.delivery!, schema: 'delivery', nats: true },
  { name: 'console', package: '@worklane/console', httpPort: 8085, grpcPort: null, metricsPort: METRICS_PORTS.console!, schema: null, nats: false },
] as const);

/** Token first (everyone authenticates through it), the gateway last. */
export const START_ORDER: readonly ServiceName[] = Object.freeze([
  'token',
  'project',
  'webhook',
  'issue',
  'delivery',
  'console',
  'gateway',
] as const);

/** Passed through to every service when set in the environment. */
export const PASS_THROUGH: readonly string[] = Object.freeze([
  'LOG_LEVEL',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'SHUTDOWN_TIMEOUT_MS',
  'DATABASE_POOL_MAX',
  'MIGRATE_ON_START',
]);

export type Env = Record<string, string>;
export type Ports = Record<ServiceName, { http: number; grpc: number | null; metrics: number }>;

export interface Keys {
  /** Ed25519 key pair (PEM) of every signing principal: gateway, console, issue, delivery, cli. */
  signing: Record<Principal, SigningKeyPair>;
  webhookSecretKey: string;
}

/** Every service may hold every public key; only `name` itself gets its SIGNING_PRIVATE_KEY. */
export function privateEnv(name: string, keys: Keys): Env {
  const pair = (keys.signing as Record<string, SigningKeyPair | undefined>)[name];
  return pair ? { SIGNING_PRIVATE_KEY: pair.privateKey } : {};
}

export function serviceInfo(name: string): ServiceInfo {
  const info = SERVICES.find((s) => s.name === name);
  if (!info) throw new Error(`unknown service ${name}; known: ${SERVICES.map((s) => s.name).join(', ')}`);
  return info;
}

export function defaultPorts(gatewayPort = Number(process.env.GATEWAY_PORT || 8080)): Ports {
  return Object.fromEntries(
    SERVICES.map((s) => [s.name, { http: s.name === 'gateway' ? Number(gatewayPort) : s.httpPort, grpc: s.grpcPort, metrics: s.metricsPort }]),
  ) as Ports;
}

export interface SharedEnvOptions {
  databaseUrl?: string | undefined;
  natsUrl?: string | undefined;
  keys: Keys;
  ports?: Ports;
  gatewayPort?: number;
  host?: string;
  env?: NodeJS.ProcessEnv;
}

/** What every service shares: where the others are, the keys, the database and NATS. */
export function sharedEnv({ databaseUrl, natsUrl, keys, ports, gatewayPort, host = '127.0.0.1', env = process.env }: SharedEnvOptions): Env {
  const p = ports ?? defaultPorts(gatewayPort);
  const http = (name: ServiceName) => `http://${host}:${p[name].http}`;
  const grpc = (name: ServiceName) => `${host}:${p[name].grpc}`;
  const shared: Env = {
    ...Object.fromEntries(PRINCIPALS.map((principal) => [`${principal.toUpperCase()}_PUBLIC_KEY`, keys.signing[principal].publicKey])),
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
  for (const name of PASS_THROUGH) {
    const value = env[name];
    if (value !== undefined && value !== '') shared[name] = value;
  }
  return shared;
}

/** The variables that make `name` itself: its ports, schema, telemetry name and bind address. */
export function ownEnv(name: ServiceName, { ports, bindHost = '127.0.0.1' }: { ports: Ports; bindHost?: string }): Env {
  const info = serviceInfo(name);
  const own: Env = { HOST: bindHost, HTTP_PORT: String(ports[name].http), METRICS_PORT: String(ports[name].metrics), OTEL_SERVICE_NAME: name };
  if (info.grpcPort !== null) own.GRPC_PORT = String(ports[name].grpc);
  if (info.schema !== null) own.DATABASE_SCHEMA = info.schema;
  // The console is reached through the gateway, which appends the client's address to
  // X-Forwarded-For: trust that one hop, and nothing a client wrote before it.
  if (name === 'console') own.CONSOLE_TRUST_PROXY = '1';
  return own;
}

export interface ServiceEnvOptions extends SharedEnvOptions {
  bindHost?: string;
}

/** Each service's environment, as `npm start` and startSystem give it. */
export function serviceEnv(options: ServiceEnvOptions): Record<ServiceName, Env> {
  const env = options.env ?? process.env;
  const ports = options.ports ?? defaultPorts(options.gatewayPort ?? Number(env.GATEWAY_PORT || 8080));
  const shared = sharedEnv({ ...options, ports, env });
  return Object.fromEntries(
    SERVICES.map((s) => {
      const e: Env = { ...shared, ...ownEnv(s.name, { ports, bindHost: options.bindHost ?? '127.0.0.1' }), ...privateEnv(s.name, options.keys) };
      if (s.schema === null) delete e.DATABASE_URL;
      return [s.name, e];
    }),
  ) as Record<ServiceName, Env>;
}
