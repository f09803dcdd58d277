// Each gateway caches a token's acceptance only for the lease the token service granted, and
// revoking waits every such lease out, so revocation is immediate on every gateway replica; the
// gateway refuses (503) rather than guesses when the token service is down and no lease covers the
// token.
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
