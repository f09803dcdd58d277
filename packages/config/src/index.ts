import { z } from 'zod';

import { SERVICES } from './service-table';

export { z };

/** Thrown when the environment does not satisfy a service's schema; names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment once against a zod object schema. This is the only place in Worklane
 * that reads `process.env`; everything else receives the parsed, typed result.
 */
export function loadConfig<Shape extends z.ZodRawShape>(schema: z.ZodObject<Shape>, env: Record<string, string | undefined> = process.env): z.infer<z.ZodObject<Shape>> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`));
}

/** A TCP port number given as a string. */
export const port = (defaultPort: number) => z.coerce.number().int().min(0).max(65535).default(defaultPort);

/** "true"/"false"/"1"/"0" as a boolean; anything else is an error rather than a silent false. */
export const flag = (defaultValue: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(defaultValue ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** A comma-separated list; empty entries are dropped. */
export const list = (defaultValue = '') =>
  z
    .string()
    .default(defaultValue)
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    );

/** A shared secret key: at least 32 characters, never given a default. */
export const secretKey = () => z.string().min(32, 'must be at least 32 characters');

/** `host:port` of a gRPC server. */
export const grpcAddress = (defaultAddress?: string) => {
  const address = z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port');
  return defaultAddress === undefined ? address : address.default(defaultAddress);
};

/**
 * Default port of each service's metrics listener (Prometheus `/metrics` only, never routed
 * through the gateway or the ingress), from the service table: distinct per service so that
 * every service can run on one host (`npm start`); in Kubernetes each pod has its own.
 */
export const METRICS_PORTS: Readonly<Record<string, number>> = Object.freeze(Object.fromEntries(SERVICES.map((s) => [s.name, s.metricsPort])));

/** Metrics port of a service not in METRICS_PORTS. */
export const DEFAULT_METRICS_PORT = 9464;

/** Variables every service reads: where to listen, logging, tracing and shutdown. */
export function baseServiceSchema(serviceName: string) {
  return {
    HOST: z.string().default('0.0.0.0').describe('Interface to listen on'),
    METRICS_PORT: port(METRICS_PORTS[serviceName] ?? DEFAULT_METRICS_PORT).describe(
      'Port of the metrics listener: Prometheus /metrics only, kept off the API port (and so off the gateway and the ingress)',
    ),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('pino log level'),
    OTEL_SERVICE_NAME: z.string().default(serviceName).describe('Service name on traces'),
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional().describe('OTLP/HTTP endpoint; traces are exported only when set'),
    SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(25_000).describe('Deadline for a graceful stop after SIGTERM'),
    SHUTDOWN_DRAIN_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(300_000)
      .default(5_000)
      .describe(
        'After SIGTERM, how long the HTTP server goes on answering on its open connections, each answer closing its connection, before it closes the idle ones (ends early once none is left; part of SHUTDOWN_TIMEOUT_MS). Clients move to another replica without a reset; 0 closes idle connections at once',
      ),
  };
}

/** Variables of a service that owns a PostgreSQL schema. */
export function databaseSchema(serviceName: string) {
  return {
    DATABASE_URL: z.string().startsWith('postgres', 'must be a postgres:// or postgresql:// URL').describe('PostgreSQL connection URL'),
    DATABASE_SCHEMA: z
      .string()
      .regex(/^[a-z_][a-z0-9_]*$/, 'must be a lower-case SQL identifier')
      .default(serviceName)
      .describe("Schema holding this service's tables"),
    DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10).describe('Maximum pooled connections'),
    MIGRATE_ON_START: flag(true).describe("Apply this service's migrations at start"),
  };
}

export {
  PRINCIPALS,
  parsePrivateKey,
  parsePublicKey,
  privateSigningKey,
  publicKeysOf,
  publicKeysSchema,
  publicSigningKey,
  type Principal,
  type PublicKeys,
  type Signer,
} from './keys';
export {
  API_STACK,
  GRPC_SERVICES,
  HTTP_CALLEES,
  SERVICES,
  START_ORDER,
  serviceInfo,
  serviceUrlEnv,
  startOrder,
  stopStages,
  type Dependency,
  type ServiceEntry,
  type ServiceInfo,
  type ServiceName,
} from './service-table';
export { inputLimitSettings, listPageLimits, pagingSettings, teamQuota } from './limits';
export { serviceThreadSettings } from './service-threads';
export { idempotencyLimits, idempotencySettings, type IdempotencyLimits } from './idempotency';
export { DEFAULT_RETRY_AFTER_SECONDS, unavailableSettings } from './unavailable';
