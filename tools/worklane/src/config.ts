import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { grpcAddress, loadConfig, privateSigningKey, z } from '@worklane/config';
import { UsageError } from './errors';

/** The repository root (tools/worklane/dist -> ../../..). */
export const REPO_ROOT = join(__dirname, '..', '..', '..');

/**
 * What the CLI reads. Every variable is optional here because each command needs only some of
 * them; `require()` names the missing one when a command needs it.
 */
export const configSchema = z.object({
  TOKEN_SERVICE_ADDR: grpcAddress().optional().describe('host:port of the token gRPC service'),
  PROJECT_GRPC_ADDR: grpcAddress().optional().describe('host:port of the project service internal gRPC'),
  CLI_PRIVATE_KEY: privateSigningKey().optional().describe("The operator CLI's Ed25519 private key (PEM): signs its gRPC calls to the token and project services"),
  DATABASE_URL: z.string().startsWith('postgres', 'must be a postgres:// or postgresql:// URL').optional().describe('PostgreSQL URL, for migrate'),
  GATEWAY_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .optional()
    .describe('URL of the gateway (`http://127.0.0.1:8080`), which the API commands call'),
  WORKLANE_TOKEN: z
    .string()
    .regex(/^wl_[0-9A-Za-z]{36}$/, 'must be an API token: wl_ and 36 letters and digits')
    .optional()
    .describe('The API token (`wl_...`) the API commands call as; read from the environment only'),
  API_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(15_000).describe('How long an API command waits for each answer of the API, in milliseconds'),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]*$/, 'must be a lower-case SQL identifier')
    .optional()
    .describe('Schema for `migrate --service NAME` (default: the service name)'),
});

export type CliConfig = z.infer<typeof configSchema>;
export type ConfigName = keyof CliConfig;

/** `.worklane/dev/runtime.json`, written by a running `npm start` (tools/dev/src/env-file.mjs). */
export function runtimeFilePath(root = REPO_ROOT): string {
  return join(root, '.worklane', 'dev', 'runtime.json');
}

function isAlive(pid: unknown): boolean {
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The variables of the system `npm start` is running, or {} when none is (a stale file is ignored). */
export function runningSystemEnv(file = runtimeFilePath()): Record<string, string> {
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown; env?: Record<string, unknown> };
    if (!isAlive(data.pid) || typeof data.env !== 'object' || data.env === null) return {};
    return Object.fromEntries(Object.entries(data.env).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== ''));
  } catch {
    return {};
  }
}

export interface LoadedConfig {
  values: CliConfig;
  /** The value of `name`, or a UsageError saying how to provide it. */
  require<Name extends ConfigName>(name: Name): NonNullable<CliConfig[Name]>;
}

/**
 * The environment wins; variables it does not set come from a running `npm start`, so the CLI
 * works against the local system with no setup.
 */
export function loadCliConfig(env: Record<string, string | undefined> = process.env, fallback = runningSystemEnv()): LoadedConfig {
  const merged: Record<string, string | undefined> = {};
  for (const name of Object.keys(configSchema.shape) as ConfigName[]) {
    const own = env[name];
    merged[name] = own !== undefined && own !== '' ? own : fallback[name];
  }
  // These only ever come from the caller's environment: a running `npm start` knows no token.
  merged.DATABASE_SCHEMA = env.DATABASE_SCHEMA || undefined;
  merged.WORKLANE_TOKEN = env.WORKLANE_TOKEN || undefined;
  const values = loadConfig(configSchema, merged);
  return {
    values,
    require(name) {
      const value = values[name];
      if (value === undefined && name === 'WORKLANE_TOKEN') {
        throw new UsageError(`WORKLANE_TOKEN is not set: the API commands call the API as an API token of the team (\`worklane token create\`, or the console).`);
      }
      if (value === undefined) {
        throw new UsageError(
          `${name} is not set and no running \`npm start\` was found (${runtimeFilePath()}).\n` +
            `Set ${name} (${configSchema.shape[name].description}), or start the system with \`npm start\`.`,
        );
      }
      return value as NonNullable<CliConfig[typeof name]>;
    },
  };
}
