import { spawn } from 'node:child_process';

import { randomId } from './keys';
import { cliPath } from './repo';
import type { Keys } from './services';

/** Anything with the system's shared environment: a System from startSystem(), or {env}. */
export interface HasEnv {
  env: Record<string, string | undefined>;
  /** The system's keys: the CLI signs with the `cli` private key, which no service receives. */
  keys?: Pick<Keys, 'signing'>;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The variables the CLI reads, taken from the system. */
export function cliEnv(system: HasEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['TOKEN_SERVICE_ADDR', 'PROJECT_GRPC_ADDR', 'WEBHOOK_GRPC_ADDR', 'CLI_PRIVATE_KEY', 'DATABASE_URL', 'NATS_URL']) {
    const value = system.env[key];
    if (value) out[key] = value;
  }
  if (system.keys) out.CLI_PRIVATE_KEY = system.keys.signing.cli.privateKey;
  return out;
}

/** Runs `node tools/worklane/bin/worklane.mjs ...args` against the system; never throws on exit codes. */
export function runCli(system: HasEnv, args: string[], options: { timeoutMs?: number; env?: Record<string, string> } = {}): Promise<CliResult> {
  const { timeoutMs = 60_000 } = options;
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...cliEnv(system), ...options.env };
    delete env.JEST_WORKER_ID;
    const child = spawn(process.execPath, [cliPath(), ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      stderr += `\n[@worklane/testing] worklane ${args.join(' ')} timed out after ${timeoutMs} ms`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The last line of `stdout` that parses as a JSON object. */
export function parseJsonLine<T = Record<string, unknown>>(stdout: string): T {
  const lines = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i] as string;
    if (!line.startsWith('{')) continue;
    try {
      return JSON.parse(line) as T;
    } catch {
      // not this one
    }
  }
  throw new Error(`no JSON line in the output:\n${stdout}`);
}

async function runCliJson<T>(system: HasEnv, args: string[]): Promise<T> {
  const result = await runCli(system, args);
  if (result.code !== 0) {
    throw new Error(
      `worklane ${args.map((a) => (a.includes(' ') ? JSON.stringify(a) : a)).join(' ')} failed ` + `(${result.signal ?? `exit ${result.code}`}):\n${result.stderr}${result.stdout}`,
    );
  }
  return parseJsonLine<T>(result.stdout);
}

export interface BootstrapResult {
  user_id: number;
  team_id: number;
  organization_id: number;
  token_id: number;
  token: string;
  /** The e-mail and password used (added by this helper, not printed by the CLI). */
  email: string;
  password: string;
}

/**
 * `worklane bootstrap --email E --password P --team T --organization O --token-name N`: creates (or
 * reuses) the user, a team owned by them, an organization and an API token. Random values by default.
 */
export async function bootstrapTeam(
  system: HasEnv,
  options: { email?: string; password?: string; teamName?: string; organizationName?: string; tokenName?: string } = {},
): Promise<BootstrapResult> {
  const id = randomId(4);
  const email = options.email ?? `user-${id}@example.test`;
  const password = options.password ?? `password-${randomId(8)}`;
  const result = await runCliJson<Omit<BootstrapResult, 'email' | 'password'>>(system, [
    'bootstrap',
    '--email',
    email,
    '--password',
    password,
    '--team',
    options.teamName ?? `Team ${id}`,
    '--organization',
    options.organizationName ?? `Organization ${id}`,
    '--token-name',
    options.tokenName ?? `token ${id}`,
  ]);
  return { ...result, email, password };
}

/** `worklane token create --team ID --email E --name N` → {token_id, token}. */
export function createToken(system: HasEnv, options: { teamId: number | string; email: string; name?: string }): Promise<{ token_id: number; token: string }> {
  return runCliJson(system, ['token', 'create', '--team', String(options.teamId), '--email', options.email, '--name', options.name ?? `token ${randomId(4)}`]);
}

/** `worklane token revoke --team ID --token-id ID`; resolves once revocation is in force. */
export async function revokeToken(system: HasEnv, options: { teamId: number | string; tokenId: number | string }): Promise<void> {
  const args = ['token', 'revoke', '--team', String(options.teamId), '--token-id', String(options.tokenId)];
  const result = await runCli(system, args);
  if (result.code !== 0) {
    throw new Error(`worklane ${args.join(' ')} failed (${result.signal ?? `exit ${result.code}`}):\n${result.stderr}${result.stdout}`);
  }
}
