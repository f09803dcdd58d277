// The API commands end to end: the real CLI process calls the real gateway and services through the
// client generated from the OpenAPI document, as an API token.
import { spawn } from 'node:child_process';
import {
  api,
  bootstrapTeam,
  cliEnv,
  cliPath,
  createToken,
  parseJsonLine,
  revokeToken,
  runCli,
  startSystem,
  type BootstrapResult,
  type CliResult,
  type System,
} from '@worklane/testing';

jest.setTimeout(180_000);

// A public address the webhook service accepts without resolving anything.
const HOOK_URL = 'https://8.8.8.8/hooks/worklane';

let system: System;
let team: BootstrapResult;

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'project', 'issue', 'webhook', 'gateway'] });
  team = await bootstrapTeam(system);
});

afterAll(async () => {
  await system?.stop();
});

/** `worklane ...args` calling the API of this system as `token` (the team's by default). */
const worklane = (args: string[], options: { token?: string; env?: Record<string, string> } = {}) =>
  runCli(system, args, { env: { GATEWAY_URL: system.gatewayUrl, WORKLANE_TOKEN: options.token ?? team.token, ...options.env } });

/** `worklane ...args` with `stdin` written to its standard input. */
function worklaneWithStdin(args: string[], env: Record<string, string>, stdin: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath(), ...args], { env: { ...process.env, ...cliEnv(system), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

function expectCleanFailure(result: CliResult, code: number, message: RegExp) {
  expect(result.code).toBe(code);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

/** The JSON line a command that succeeded printed (its stderr in the failure message otherwise). */
function printed<T>(result: CliResult): T {
  if (result.code !== 0) throw new Error(`worklane exited ${result.code ?? result.signal}: ${result.stderr}`);
  return parseJsonLine<T>(result.stdout);
}

const ids = (extra: Record<string, number> = {}) => Object.entries({ team: team.team_id, ...extra }).flatMap(([name, value]) => [`--${name}`, String(value)]);

describe('worklane API commands', () => {
  it('create and list projects and issues, printing what the API answered', async () => {
    const organizations = printed<{ data: { id: number; name: string }[]; next_cursor: string | null }>(await worklane(['organization', 'list', ...ids()]));
    expect(organizations.data.map((organization) => organization.id)).toEqual([team.organization_id]);
    expect(organizations.next_cursor).toBeNull();

    const created = await worklane(['project', 'create', ...ids({ organization: team.organization_id }), '--name', 'CLI Project', '--description', 'Made by the CLI']);
    expect(created.code).toBe(0);
    expect(created.stdout.trim().split('\n')).toHaveLength(1);
    const project = printed<{ id: number; organization_id: number; name: string; slug: string; description: string }>(created);
    expect(project).toMatchObject({ organization_id: team.organization_id, name: 'CLI Project', slug: 'cli-project', description: 'Made by the CLI' });

    const projects = printed<{ data: { id: number }[] }>(await worklane(['project', 'list', ...ids({ organization: team.organization_id })]));
    expect(projects.data.map((entry) => entry.id)).toEqual([project.id]);

    const where = ids({ organization: team.organization_id, project: project.id });
    const issue = printed<{ id: number; title: string; type: string; priority: string }>(
      await worklane(['issue', 'create', ...where, '--title', 'Fix the thing', '--type', 'bug', '--priority', 'high']),
    );
    expect(issue).toMatchObject({ title: 'Fix the thing', type: 'bug', priority: 'high' });
    printed(await worklane(['issue', 'create', ...where, '--title', 'Second']));
    const first = printed<{ data: { title: string }[]; next_cursor: string }>(await worklane(['issue', 'list', ...where, '--limit', '1']));
    expect(first.data.map((entry) => entry.title)).toEqual(['Second']);
    const second = printed<{ data: { title: string }[] }>(await worklane(['issue', 'list', ...where, '--limit', '1', '--cursor', first.next_cursor]));
    expect(second.data.map((entry) => entry.title)).toEqual(['Fix the thing']);

    // What the CLI made is what the API serves.
    expect((await api(system, team.token).get(`/teams/${team.team_id}/organizations/${team.organization_id}/projects/${project.id}/issues/${issue.id}`)).body).toMatchObject({
      id: issue.id,
      title: 'Fix the thing',
    });
  });

  it('creates a webhook with the secret from stdin and lists it without the secret', async () => {
    const other = await bootstrapTeam(system);
    const secret = 'a-signing-secret-from-stdin';
    const result = await worklaneWithStdin(
      ['webhook', 'create', '--team', String(other.team_id), '--url', HOOK_URL, '--events', 'issue.created, issue.updated', '--secret-stdin', '--inactive'],
      { GATEWAY_URL: system.gatewayUrl, WORKLANE_TOKEN: other.token },
      `${secret}\n`,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(secret);
    const webhook = printed<{ id: number; url: string; events: string[]; active: boolean }>(result);
    expect(webhook).toMatchObject({ url: HOOK_URL, events: ['issue.created', 'issue.updated'], active: false });
    const listed = await worklane(['webhook', 'list', '--team', String(other.team_id)], { token: other.token });
    expect(printed<{ data: { id: number }[] }>(listed).data.map((entry) => entry.id)).toEqual([webhook.id]);
    expect(listed.stdout).not.toContain(secret);
  });

  it("says what the API refused: a 422's fields, another team, a revoked token", async () => {
    const invalid = await worklane(['webhook', 'create', ...ids(), '--url', 'http://8.8.8.8/', '--events', 'issue.created,project.created']);
    expectCleanFailure(invalid, 1, /the API refused the request \(422 validation_failed\): .*url: .*https/);
    expect(invalid.stderr).toMatch(/events\.1: /);

    const other = await bootstrapTeam(system);
    expectCleanFailure(await worklane(['organization', 'list', '--team', String(other.team_id)]), 1, /WORKLANE_TOKEN is not a token of this team \(403 forbidden\)/);
    expectCleanFailure(await worklane(['project', 'list', ...ids({ organization: other.organization_id })]), 1, /\(404 not_found\)/);

    const made = await createToken(system, { teamId: team.team_id, email: team.email });
    await revokeToken(system, { teamId: team.team_id, tokenId: made.token_id });
    const revoked = await worklane(['organization', 'list', ...ids()], { token: made.token });
    expectCleanFailure(revoked, 1, /the API refused WORKLANE_TOKEN \(401 unauthenticated\)/);
    expect(revoked.stderr).not.toContain(made.token);
  });

  it('needs a token and a reachable gateway, and says so', async () => {
    const noToken = await runCli(system, ['organization', 'list', ...ids()], { env: { GATEWAY_URL: system.gatewayUrl, WORKLANE_TOKEN: '' } });
    expectCleanFailure(noToken, 2, /WORKLANE_TOKEN is not set/);
    const malformed = await worklane(['organization', 'list', ...ids()], { token: 'wl_short' });
    expectCleanFailure(malformed, 2, /WORKLANE_TOKEN: must be an API token/);
    expect(malformed.stderr).not.toContain('wl_short');
    const unreachable = await worklane(['organization', 'list', ...ids()], { env: { GATEWAY_URL: 'http://127.0.0.1:9' } });
    expectCleanFailure(unreachable, 1, /cannot reach the API at http:\/\/127\.0\.0\.1:9 .*npm start/);
  });

  it('prints help for each API command', async () => {
    for (const command of ['organization list', 'project create', 'project list', 'issue create', 'issue list', 'webhook create', 'webhook list']) {
      const help = await worklane([...command.split(' '), '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: worklane ${command}`);
      expect(help.stdout).toContain('WORKLANE_TOKEN');
    }
  });
});
