// The wiring between services, computed from the service table (@worklane/config's
// service-table.ts): one definition for `npm start` (tools/dev loads it from this package's build)
// and for the tests' systems.

import { GRPC_SERVICES, HTTP_CALLEES, PRINCIPALS, SERVICES, serviceInfo, serviceUrlEnv, type Principal, type ServiceName } from '@worklane/config';

import type { SigningKeyPair } from './keys';

/** Passed through to every service when set in the environment. */
export const PASS_THROUGH: readonly string[] = Object.freeze([
  'LOG_LEVEL',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'SHUTDOWN_TIMEOUT_MS',
  'SHUTDOWN_DRAIN_MS',
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

export function defaultPorts(gatewayPort = Number(process.env.GATEWAY_PORT || 8080)): Ports {
  return Object.fromEntries(SERVICES.map((s) => [s.name, { http: s.name === 'gateway' ? Number(gatewayPort) : s.httpPort, grpc: s.grpcPort, metrics: s.metricsPort }])) as Ports;
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
  const shared: Env = {
    ...Object.fromEntries(PRINCIPALS.map((principal) => [`${principal.toUpperCase()}_PUBLIC_KEY`, keys.signing[principal].publicKey])),
    WEBHOOK_SECRET_KEY: keys.webhookSecretKey,
    // Where the gRPC servers and the services called over HTTP are, as the table names them.
    ...Object.fromEntries(GRPC_SERVICES.map((name) => [serviceInfo(name).grpcAddrEnv!, `${host}:${p[name].grpc}`])),
    ...Object.fromEntries(HTTP_CALLEES.map((name) => [serviceUrlEnv(name), `http://${host}:${p[name].http}`])),
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
  return { ...own, ...info.env };
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
