// schemathesis against a live stack: every operation of the OpenAPI document the gateway serves,
// with every check schemathesis has (server errors, status, content type, headers and response
// schema conformance, negative data rejected, positive data accepted, missing headers, unsupported
// methods, use after free, resource availability, ignored auth, and object-level authorization
// between two teams' tokens). Its configuration is schemathesis/schemathesis.toml; the binary is
// provisioned by `npm test` (tools/dev/src/provision/schemathesis.mjs, WORKLANE_SCHEMATHESIS_BIN).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_STACK, api, bootstrapTeam, startSystem, type BootstrapResult, type System } from '@worklane/testing';
import { readJunitSummary, type RunSummary } from '../src/junit';
import { LoopbackDns } from '../src/loopback-dns';

jest.setTimeout(420_000);

const CONFIG = path.join(__dirname, '..', 'schemathesis', 'schemathesis.toml');
const HOOKS = path.join(__dirname, '..', 'schemathesis', 'hooks.py');
/** The whole run, stack excluded, must end within this: it is part of every `npm test`. */
const RUN_TIMEOUT_MS = 300_000;

let system: System;
let teams: BootstrapResult[];
let workDir: string;
let dns: LoopbackDns;

beforeAll(async () => {
  dns = await LoopbackDns.start();
  system = await startSystem({
    services: [...API_STACK],
    env: {
      LOG_LEVEL: 'warn',
      // The fuzzer sends as fast as the stack answers, creates without end and names receivers
      // that do not exist: none of that should stop it before it reaches the code under test.
      RATE_LIMIT_PER_SECOND: 0,
      RATE_LIMIT_TEAM_PER_SECOND: 0,
      TEAM_MAX_ORGANIZATIONS: 100_000,
      TEAM_MAX_PROJECTS: 100_000,
      TEAM_MAX_WEBHOOKS: 100_000,
      // Every receiver host name resolves to this machine, which webhooks may then call: webhooks
      // are created, pinged and redelivered for real (nothing answers the deliveries).
      WEBHOOK_DNS_SERVERS: dns.server,
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    },
  });
  // One after the other: the same ids on every run, so that a seeded run makes the same requests.
  teams = [await bootstrapTeam(system), await bootstrapTeam(system)];
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'worklane-schemathesis-'));
});

afterAll(async () => {
  await system?.stop();
  await dns?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

function schemathesisBin(): string {
  const bin = process.env.WORKLANE_SCHEMATHESIS_BIN;
  if (!bin) throw new Error('WORKLANE_SCHEMATHESIS_BIN is not set: run the contract tests through `npm test`, which provisions schemathesis.');
  return bin;
}

function runSchemathesis(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(schemathesisBin(), ['--config-file', CONFIG, 'run', `${system.gatewayUrl}/api/v1/openapi.json`, '--no-color'], {
      env: { ...process.env, ...env, PYTHONUNBUFFERED: '1' },
      cwd: workDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

it('finds no failure in any operation, with every check', async () => {
  const [a, b] = teams as [BootstrapResult, BootstrapResult];
  // A project of the first team for the paths below it.
  const project = await api(system, a.token).post(`/teams/${a.team_id}/organizations/${a.organization_id}/projects`, { name: 'Fuzzed' });
  expect(project.status).toBe(201);

  const authFile = path.join(workDir, 'auth.json');
  fs.writeFileSync(
    authFile,
    JSON.stringify({
      auth: [
        { name: 'team-a', fixedHeaders: [{ name: 'Authorization', value: `Bearer ${a.token}` }] },
        { name: 'team-b', fixedHeaders: [{ name: 'Authorization', value: `Bearer ${b.token}` }] },
      ],
    }),
  );
  const reports = path.join(workDir, 'reports');
  const { code, output } = await runSchemathesis({
    WORKLANE_API_URL: `${system.gatewayUrl}/api/v1`,
    WORKLANE_TEAM_ID: String(a.team_id),
    WORKLANE_ORGANIZATION_ID: String(a.organization_id),
    WORKLANE_PROJECT_ID: String(project.body.id),
    WORKLANE_WFC_AUTH_FILE: authFile,
    WORKLANE_SCHEMATHESIS_REPORTS: reports,
    SCHEMATHESIS_HOOKS: HOOKS,
  });

  let summary: RunSummary | undefined;
  try {
    summary = readJunitSummary(reports);
  } catch {
    summary = undefined;
  }
  // WORKLANE_SCHEMATHESIS_OUTPUT keeps the whole output (every failure with its reproduction).
  if (process.env.WORKLANE_SCHEMATHESIS_OUTPUT) fs.writeFileSync(process.env.WORKLANE_SCHEMATHESIS_OUTPUT, output);
  // The closing lines of schemathesis' own summary, in the test output whatever the outcome.
  process.stdout.write(`\nschemathesis (exit ${code}):\n${output.split('\n').slice(-60).join('\n')}\n`);
  if (summary) process.stdout.write(`schemathesis summary: ${summary.operations} operations, ${summary.failures} failures, ${summary.errors} errors\n`);

  expect({ code, failures: summary?.failedOperations ?? 'no report' }).toEqual({ code: 0, failures: [] });
  expect(summary?.operations).toBeGreaterThanOrEqual(20);
});
