// A token in use keeps its cached acceptance past the cache TTL: the gateway has it checked again
// with its next read of the token change feed (a batch of tokens in one call, one statement of the
// token service) instead of asking Authenticate once per token, and a token revoked meanwhile is
// still refused at once.
import { api, bootstrapTeam, createToken, revokeToken, startSystem, type BootstrapResult, type ServiceHandle, type System } from '@worklane/testing';
import { eventually, parseMetrics, samples } from './support';

jest.setTimeout(120_000);

let system: System;
let team: BootstrapResult;
let gateway: ServiceHandle;

const projects = () => `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;

/** The gateway's auth cache counters. */
async function counters(): Promise<{ miss: number; renewed: number; dropped: number }> {
  const text = await (await fetch(`${gateway.metricsUrl}/metrics`)).text();
  const all = parseMetrics(text);
  const value = (name: string, result: string) => samples(all, name, { result })[0]?.value ?? 0;
  return {
    miss: value('worklane_gateway_auth_cache_lookups_total', 'miss'),
    renewed: value('worklane_gateway_auth_cache_renewals_total', 'renewed'),
    dropped: value('worklane_gateway_auth_cache_renewals_total', 'dropped'),
  };
}

beforeAll(async () => {
  system = await startSystem({
    services: ['token', 'project', 'gateway'],
    serviceEnv: { gateway: { WEBHOOK_SERVICE_URL: '', ISSUE_SERVICE_URL: '', DELIVERY_SERVICE_URL: '', CONSOLE_SERVICE_URL: '' } },
  });
  team = await bootstrapTeam(system);
  // A TTL short enough to pass a few times during the test, long enough that a renewal (asked from
  // 75 to 90% of it, sent with the feed's next read, every 200 ms) lands well before it ends.
  gateway = await system.startService('gateway', {
    GATEWAY_AUTH_CACHE_TTL_MS: '4000',
    WEBHOOK_SERVICE_URL: '',
    ISSUE_SERVICE_URL: '',
    DELIVERY_SERVICE_URL: '',
    CONSOLE_SERVICE_URL: '',
  });
});

afterAll(async () => {
  await system?.stop();
});

describe('auth cache renewals', () => {
  it('keeps a token in use cached past its TTL through the feed, with no further Authenticate', async () => {
    const { token } = await createToken(system, { teamId: team.team_id, email: team.email });
    expect((await api(gateway.url, token).get(projects())).status).toBe(200);
    const first = await counters();
    // Requests keep the token in use until the feed has renewed its acceptance twice (past two TTLs).
    await eventually(async () => {
      expect((await api(gateway.url, token).get(projects())).status).toBe(200);
      return (await counters()).renewed >= first.renewed + 2;
    }, 300);
    const after = await counters();
    expect(after.miss).toBe(first.miss);
    expect(after.dropped).toBe(first.dropped);
  });

  it('still refuses a revoked token on the very next request', async () => {
    const { token_id, token } = await createToken(system, { teamId: team.team_id, email: team.email });
    expect((await api(gateway.url, token).get(projects())).status).toBe(200);
    const first = await counters();
    await eventually(async () => {
      expect((await api(gateway.url, token).get(projects())).status).toBe(200);
      return (await counters()).renewed > first.renewed;
    }, 300);
    await revokeToken(system, { teamId: team.team_id, tokenId: token_id });
    for (let attempt = 0; attempt < 10; attempt++) expect((await api(gateway.url, token).get(projects())).status).toBe(401);
  });
});
