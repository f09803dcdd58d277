// `npx worklane` end to end: the real CLI process against real token, project and gateway services.
import { Client } from 'pg';
import { api, parseJsonLine, runCli, signingKeyPair, startSystem, type CliResult, type System } from '@worklane/testing';

jest.setTimeout(180_000);

let system: System;

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'project', 'gateway'] });
});

afterAll(async () => {
  await system?.stop();
});

const worklane = (...args: string[]) => runCli(system, args);
const unique = () => `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;

function expectCleanFailure(result: CliResult, code: number, message: RegExp) {
  expect(result.code).toBe(code);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
  // A message for a person, not a stack trace.
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('worklane bootstrap', () => {
  it('prints exactly one JSON line with the ids and the token, which works against the API', async () => {
    const email = `boot-${unique()}@example.test`;
    const result = await worklane('bootstrap', '--email', email, '--password', 'bootstrap-pass', '--team', 'Acme', '--organization', 'Acme Org', '--token-name', 'ci');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    const printed = JSON.parse(lines[0]!);
    expect(Object.keys(printed)).toEqual(['user_id', 'team_id', 'organization_id', 'token_id', 'token']);
    for (const key of ['user_id', 'team_id', 'organization_id', 'token_id']) expect(Number.isInteger(printed[key]) && printed[key] > 0).toBe(true);
    expect(printed.token).toMatch(/^wl_[0-9A-Za-z]{36}$/);

    const projects = `/teams/${printed.team_id}/organizations/${printed.organization_id}/projects`;
    expect((await api(system, printed.token).get(projects)).body).toEqual({ data: [] });
    const organizations = await api(system, printed.token).get(`/teams/${printed.team_id}/organizations`);
    expect(organizations.body.data).toEqual([expect.objectContaining({ id: printed.organization_id, name: 'Acme Org' })]);
  });

  it('reuses an existing user and creates a new team every time', async () => {
    const email = `again-${unique()}@example.test`;
    const args = ['bootstrap', '--email', email, '--password', 'bootstrap-pass', '--team', 'T', '--organization', 'O', '--token-name', 'N'];
    const first = parseJsonLine<{ user_id: number; team_id: number }>((await worklane(...args)).stdout);
    const second = parseJsonLine<{ user_id: number; team_id: number }>((await worklane(...args.map((arg) => (arg === email ? email.toUpperCase() : arg)))).stdout);
    expect(second.user_id).toBe(first.user_id);
    expect(second.team_id).not.toBe(first.team_id);
  });

  it('checks every flag before creating anything', async () => {
    const email = `partial-${unique()}@example.test`;
    const result = await worklane('bootstrap', '--email', email, '--password', 'bootstrap-pass', '--team', 'T', '--organization', '', '--token-name', 'N');
    expectCleanFailure(result, 2, /--organization must not be empty/);
    expectCleanFailure(await worklane('user', 'create', '--email', email, '--password', 'bootstrap-pass', '--bogus'), 2, /Unknown option '--bogus'/);
    const lookup = await worklane('team', 'create', '--name', 'x', '--owner-email', email);
    expectCleanFailure(lookup, 1, /no user with this email/);
  });
});

describe('worklane token', () => {
  it('creates a token for a member, lists it without its value, and revokes it at once', async () => {
    const email = `tokens-${unique()}@example.test`;
    const boot = parseJsonLine<{ team_id: number; organization_id: number; token_id: number }>(
      (await worklane('bootstrap', '--email', email, '--password', 'tokens-pass', '--team', 'T', '--organization', 'O', '--token-name', 'first')).stdout,
    );
    const created = await worklane('token', 'create', '--team', String(boot.team_id), '--email', email, '--name', 'second');
    expect(created.code).toBe(0);
    const token = JSON.parse(created.stdout.trim());
    expect(Object.keys(token)).toEqual(['token_id', 'token']);
    expect(token.token).toMatch(/^wl_[0-9A-Za-z]{36}$/);

    const listed = parseJsonLine<{ tokens: { token_id: number; name: string }[] }>((await worklane('token', 'list', '--team', String(boot.team_id))).stdout);
    expect(listed.tokens.map((entry) => [entry.token_id, entry.name])).toEqual([
      [token.token_id, 'second'],
      [boot.token_id, 'first'],
    ]);
    expect(JSON.stringify(listed)).not.toContain('wl_');

    const projects = `/teams/${boot.team_id}/organizations/${boot.organization_id}/projects`;
    expect((await api(system, token.token).get(projects)).status).toBe(200);
    const revoked = await worklane('token', 'revoke', '--team', String(boot.team_id), '--token-id', String(token.token_id));
    expect(revoked.code).toBe(0);
    expect((await api(system, token.token).get(projects)).status).toBe(401);

    expectCleanFailure(await worklane('token', 'revoke', '--team', String(boot.team_id), '--token-id', String(token.token_id)), 1, /not found/);
    expectCleanFailure(await worklane('token', 'create', '--team', 'abc', '--email', email, '--name', 'x'), 2, /--team must be a positive integer/);
    expectCleanFailure(await worklane('token', 'create', '--team', String(boot.team_id), '--email', email), 2, /missing --name/);
  });
});

describe('accounts and organizations', () => {
  it('creates a user, a team, a membership and an organization', async () => {
    const owner = `owner-${unique()}@example.test`;
    const other = `other-${unique()}@example.test`;
    const user = parseJsonLine<{ user_id: number; email: string }>((await worklane('user', 'create', '--email', owner, '--password', 'owner-pass', '--name', 'Owner')).stdout);
    expect(user.email).toBe(owner);
    expect((await worklane('user', 'create', '--email', other, '--password', 'other-pass')).code).toBe(0);
    const team = parseJsonLine<{ team_id: number; owner_user_id: number }>((await worklane('team', 'create', '--name', 'Made By CLI', '--owner-email', owner)).stdout);
    expect(team.owner_user_id).toBe(user.user_id);
    const membership = parseJsonLine<{ role: string }>((await worklane('member', 'add', '--team', String(team.team_id), '--email', other)).stdout);
    expect(membership.role).toBe('member');
    const organization = parseJsonLine<{ organization_id: number; team_id: number }>(
      (await worklane('organization', 'create', '--team', String(team.team_id), '--name', 'From The CLI')).stdout,
    );
    expect(organization.team_id).toBe(team.team_id);
    // The new member may now hold a token of the team.
    expect((await worklane('token', 'create', '--team', String(team.team_id), '--email', other, '--name', 'member token')).code).toBe(0);
    expectCleanFailure(await worklane('user', 'create', '--email', owner.toUpperCase(), '--password', 'owner-pass'), 1, /already exists/);
    expectCleanFailure(await worklane('user', 'create', '--email', `short-${unique()}@example.test`, '--password', 'short'), 1, /at least 8 characters/);
  });
});

describe('worklane migrate', () => {
  it('applies a service’s migrations to the schema DATABASE_SCHEMA names, once', async () => {
    const schema = `cli_${unique().replace(/\W/g, '_')}`;
    const first = await runCli(system, ['migrate', '--service', 'token'], { env: { DATABASE_SCHEMA: schema } });
    expect(first.code).toBe(0);
    const result = parseJsonLine<{ migrated: { service: string; schema: string; applied: string[] }[] }>(first.stdout);
    expect(result.migrated).toEqual([{ service: 'token', schema, applied: expect.arrayContaining(['001_accounts.sql']) }]);
    const again = parseJsonLine<{ migrated: { applied: string[] }[] }>((await runCli(system, ['migrate', '--service', 'token'], { env: { DATABASE_SCHEMA: schema } })).stdout);
    expect(again.migrated[0]!.applied).toEqual([]);

    const client = new Client({ connectionString: system.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema]);
      expect(rows.map((row) => row.table_name)).toEqual(expect.arrayContaining(['api_tokens', 'memberships', 'sessions', 'teams', 'users']));
    } finally {
      await client.end();
    }
    expectCleanFailure(await worklane('migrate', '--service', 'nope'), 2, /no migrations for "nope"/);
  });
});

describe('usage and failures', () => {
  it('prints help for the CLI and for each command', async () => {
    const help = await worklane('--help');
    expect(help.code).toBe(0);
    for (const command of ['bootstrap', 'token create', 'token revoke', 'token list', 'user create', 'team create', 'member add', 'organization create', 'migrate']) {
      expect(help.stdout).toContain(command);
      const own = await worklane(...command.split(' '), '--help');
      expect(own.code).toBe(0);
      expect(own.stdout).toContain(`Usage: worklane ${command}`);
    }
  });

  it('refuses unknown commands with exit code 2', async () => {
    expectCleanFailure(await worklane('frobnicate'), 2, /unknown command "frobnicate"/);
    expectCleanFailure(await worklane('token', 'destroy'), 2, /takes one of: create, revoke, list/);
  });

  it('says which service it cannot reach, without a stack trace', async () => {
    const result = await runCli(system, ['token', 'list', '--team', '1'], { env: { TOKEN_SERVICE_ADDR: '127.0.0.1:9' } });
    expectCleanFailure(result, 1, /cannot reach the token service at 127\.0\.0\.1:9/);
  });

  it('says when its signing key is not the system’s', async () => {
    const result = await runCli(system, ['token', 'list', '--team', '1'], { env: { CLI_PRIVATE_KEY: signingKeyPair().privateKey } });
    expectCleanFailure(result, 1, /CLI_PRIVATE_KEY is not the key/);
  });

  it('names an invalid variable', async () => {
    const result = await runCli(system, ['token', 'list', '--team', '1'], { env: { TOKEN_SERVICE_ADDR: 'no-port' } });
    expectCleanFailure(result, 2, /TOKEN_SERVICE_ADDR: must be host:port/);
  });
});
