// Each gateway keeps a token's acceptance for a long while (GATEWAY_AUTH_CACHE_TTL_MS) and drops it
// when the token service's change feed lists the token; it trusts its cache only while its last
// read of the feed holds (the feed's lease), and revoking waits that lease out, so revocation is
// immediate on every gateway replica, and so is whatever deletes or moves a token once any later
// revocation has returned. The gateway refuses (503) rather than guesses when the token service is
// down and no lease covers the token.
import { Client } from 'pg';
import { api, bootstrapTeam, createToken, revokeToken, startSystem, type BootstrapResult, type ServiceHandle, type System } from '@worklane/testing';
import { direct, eventually } from './support';

jest.setTimeout(180_000);

let system: System;
let team: BootstrapResult;
let gateways: string[];

const projects = () => `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;

beforeAll(async () => {
  // Without the issue, delivery and console services: their routes are not asked here.
  system = await startSystem({
    services: ['token', 'project', 'gateway'],
    serviceEnv: { gateway: { WEBHOOK_SERVICE_URL: '', ISSUE_SERVICE_URL: '', DELIVERY_SERVICE_URL: '', CONSOLE_SERVICE_URL: '' } },
  });
  const second: ServiceHandle = await system.startService('gateway');
  gateways = [system.gatewayUrl, second.url];
  team = await bootstrapTeam(system);
});

afterAll(async () => {
  await system?.stop();
});

describe('revocation', () => {
  it('refuses a revoked token on the very next request, on every attempt, on both gateways', async () => {
    for (let round = 0; round < 5; round++) {
      const { token_id, token } = await createToken(system, { teamId: team.team_id, email: team.email });
      for (const gateway of gateways) expect((await api(gateway, token).get(projects())).status).toBe(200);

      await revokeToken(system, { teamId: team.team_id, tokenId: token_id });

      for (let attempt = 0; attempt < 20; attempt++) {
        const response = await api(gateways[attempt % 2]!, token).get(projects());
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ message: 'Unauthenticated.', code: 'unauthenticated' });
      }
    }
  });

  it('leaves the team’s other tokens working', async () => {
    const { token_id } = await createToken(system, { teamId: team.team_id, email: team.email });
    await revokeToken(system, { teamId: team.team_id, tokenId: token_id });
    for (const gateway of gateways) expect((await api(gateway, team.token).get(projects())).status).toBe(200);
  });
});

/** Runs SQL in the token service's schema, as an operator or a cascade would change its tables. */
async function tokenSql<Row extends object = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new Client({ connectionString: system.databaseUrl, options: '-c search_path=token' });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

/**
 * Returns once a revocation started after now has returned: from then on every gateway has either
 * read every token change committed before, or stopped trusting its cache.
 */
async function revocationBarrier(): Promise<void> {
  const { token_id } = await createToken(system, { teamId: team.team_id, email: team.email });
  await revokeToken(system, { teamId: team.team_id, tokenId: token_id });
}

describe('token changes outside RevokeToken', () => {
  it('refuses, on every gateway, a token gone with its owner’s membership', async () => {
    // A second member of the team, with a token each gateway has cached.
    const email = `leaver-${Date.now()}@example.test`;
    const [user] = await tokenSql<{ id: number }>(`INSERT INTO users (email, name, password_hash) VALUES ($1, 'Leaver', 'unusable') RETURNING id`, [email]);
    await tokenSql(`INSERT INTO memberships (team_id, user_id, role) VALUES ($1, $2, 'member')`, [team.team_id, user!.id]);
    const { token } = await createToken(system, { teamId: team.team_id, email });
    for (const gateway of gateways) expect((await api(gateway, token).get(projects())).status).toBe(200);

    await tokenSql('DELETE FROM memberships WHERE team_id = $1 AND user_id = $2', [team.team_id, user!.id]);
    await revocationBarrier();

    for (let attempt = 0; attempt < 10; attempt++) expect((await api(gateways[attempt % 2]!, token).get(projects())).status).toBe(401);
    for (const gateway of gateways) expect((await api(gateway, team.token).get(projects())).status).toBe(200);
  });

  it('honours a token moved to another team: its old team’s paths get 403, the new team’s are served', async () => {
    const { token_id, token } = await createToken(system, { teamId: team.team_id, email: team.email });
    for (const gateway of gateways) expect((await api(gateway, token).get(projects())).status).toBe(200);

    const [other] = await tokenSql<{ id: number }>(`INSERT INTO teams (name) VALUES ('Moved to') RETURNING id`);
    await tokenSql(`INSERT INTO memberships (team_id, user_id, role) VALUES ($1, $2, 'owner')`, [other!.id, team.user_id]);
    await tokenSql('UPDATE api_tokens SET team_id = $1 WHERE id = $2', [other!.id, token_id]);
    await revocationBarrier();

    for (const gateway of gateways) {
      expect((await api(gateway, token).get(projects())).status).toBe(403);
      expect((await api(gateway, token).get(`/teams/${other!.id}/organizations`)).status).toBe(200);
    }
  });
});

describe('when the token service is down', () => {
  it('fails closed with 503 and Retry-After on every gateway, which stays ready, and recovers when it returns', async () => {
    const token = system.services.token!;
    const readyz = (gateway: string) => direct(gateway, 'GET', '/readyz');
    await eventually(async () => (await readyz(gateways[0]!)).status === 200);

    // A valid token that no gateway has seen, so no gateway holds a lease on it.
    const unseen = await createToken(system, { teamId: team.team_id, email: team.email });
    // team.token was just used on both gateways, so each may still hold it under its lease.
    for (const gateway of gateways) expect((await api(gateway, team.token).get(projects())).status).toBe(200);

    await token.kill();
    const killedAt = Date.now();
    for (const gateway of gateways) {
      // Not cached: no answer from the token service means 503 straight away.
      for (let attempt = 0; attempt < 5; attempt++) {
        const response = await api(gateway, unseen.token).get(projects());
        expect(response.status).toBe(503);
        expect(response.body).toEqual({ message: 'Service unavailable.', code: 'service_unavailable' });
        expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      // Fail closed means no token is let through, not even an unknown one.
      expect((await api(gateway, 'wl_' + 'B'.repeat(36)).get(projects())).status).toBe(503);
      // Every gateway answering 503 with Retry-After beats no gateway in the load balancer: what
      // needs no token (the API description, the console) still works.
      expect((await readyz(gateway)).status).toBe(200);
      expect((await direct(gateway, 'GET', '/api/v1/openapi.json')).status).toBe(200);
    }
    // Cached: a gateway may keep accepting team.token until the lease it was granted before the
    // kill runs out (GATEWAY_AUTH_CACHE_TTL_MS and TOKEN_CACHE_MAX_TTL_MS, 1 s by default), and
    // not a moment longer. Allow for that second plus scheduling slack, then it must be 503.
    for (const gateway of gateways) {
      let status = 0;
      while (Date.now() - killedAt < 3_000) {
        status = (await api(gateway, team.token).get(projects())).status;
        if (status !== 200) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(status).toBe(503);
      for (let attempt = 0; attempt < 5; attempt++) expect((await api(gateway, team.token).get(projects())).status).toBe(503);
    }

    await token.restart();
    for (const gateway of gateways) {
      await eventually(async () => (await api(gateway, team.token).get(projects())).status === 200);
      expect((await api(gateway, unseen.token).get(projects())).status).toBe(200);
      expect((await api(gateway, 'wl_' + 'B'.repeat(36)).get(projects())).status).toBe(401);
      await eventually(async () => (await readyz(gateway)).status === 200);
    }
  });
});
