// API rate limits shared by every gateway replica: two replicas in front of one token service,
// syncing every 20 ms, allow a team its allowance once, however its requests are spread over them;
// when the token service cannot answer the sync, each replica goes on limiting on its own and
// refuses nothing for that; the RateLimit-* headers tell every authenticated answer where the
// tighter allowance stands. Syncs are waited for on each replica's metrics, never with a sleep.
import { api, bootstrapTeam, startSystem, type BootstrapResult, type ServiceHandle, type System } from '@worklane/testing';
import { eventually, parseMetrics, samples } from './support';
import { SyncBlockingProxy } from './sync-blocking-proxy';

jest.setTimeout(180_000);

let system: System;
let proxy: SyncBlockingProxy;

/** The team allowance under test: ten at once, next to no refill; the token's is far looser. */
const LIMITS = {
  RATE_LIMIT_TEAM_PER_SECOND: '0.001',
  RATE_LIMIT_TEAM_BURST: '10',
  RATE_LIMIT_PER_SECOND: '1000',
  RATE_LIMIT_BURST: '1000',
  RATE_LIMIT_SYNC_INTERVAL_MS: '20',
  RATE_LIMIT_REFUSAL_DELAY_MAX_MS: '0',
};
/** Only the project service runs behind these replicas; the webhook routes answer 503. */
const UPSTREAMS = { WEBHOOK_SERVICE_URL: '', ISSUE_SERVICE_URL: '', DELIVERY_SERVICE_URL: '', CONSOLE_SERVICE_URL: '' };

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'project', 'gateway'], serviceEnv: { gateway: UPSTREAMS } });
  proxy = await SyncBlockingProxy.start(system.grpcAddrs.token);
});

afterAll(async () => {
  await system?.stop();
  await proxy?.stop();
});

const replica = (env: Record<string, string> = {}) => system.startService('gateway', { ...UPSTREAMS, ...LIMITS, ...env });
const organizations = (team: BootstrapResult) => `/teams/${team.team_id}/organizations`;

async function metric(gateway: ServiceHandle, name: string): Promise<number> {
  const text = await (await fetch(`${gateway.metricsUrl}/metrics`)).text();
  return samples(parseMetrics(text), name, { worker: 'rate limit sync' }).reduce((sum, sample) => sum + sample.value, 0);
}

/**
 * Resolves once `gateway` has finished two syncs since the call: the second started after it, so
 * what was spent on the gateway before is in the shared buckets, and their levels are in its own.
 */
async function synced(gateway: ServiceHandle): Promise<void> {
  const start = await metric(gateway, 'worklane_worker_passes_total');
  await eventually(async () => (await metric(gateway, 'worklane_worker_passes_total')) >= start + 2);
}

const rateHeaders = (response: { headers: Record<string, string> }) => ({
  limit: response.headers['ratelimit-limit'],
  remaining: response.headers['ratelimit-remaining'],
  reset: response.headers['ratelimit-reset'],
});

describe('a rate limit shared by two gateway replicas', () => {
  let a: ServiceHandle;
  let b: ServiceHandle;

  beforeAll(async () => {
    [a, b] = await Promise.all([replica(), replica()]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it("refuses a team on every replica once the replicas together have spent the team's allowance", async () => {
    const team = await bootstrapTeam(system);
    const onA = api(a.url, team.token);
    const onB = api(b.url, team.token);

    const first = await onB.get(organizations(team));
    expect(first.status).toBe(200);
    expect(rateHeaders(first)).toMatchObject({ limit: '10', remaining: '9' });
    for (let n = 0; n < 5; n++) expect((await onA.get(organizations(team))).status).toBe(200);

    // A reports its 5, B its 1 and learns A's, A learns B's: both hold 10 - 6 = 4.
    await synced(a);
    await synced(b);
    await synced(a);
    const seen = await onB.get(organizations(team));
    expect(seen.status).toBe(200);
    // Counted per replica, B would have 8 left.
    expect(rateHeaders(seen).remaining).toBe('3');

    // A spends what is left; it may not know of B's last request yet (one interval's overshoot).
    let allowedOnA = 0;
    for (;;) {
      const response = await onA.get(organizations(team));
      if (response.status === 429) break;
      expect(response.status).toBe(200);
      allowedOnA += 1;
      expect(allowedOnA).toBeLessThanOrEqual(4);
    }
    expect(allowedOnA).toBeGreaterThanOrEqual(3);

    await synced(a);
    await synced(b);
    const refused = await onB.get(organizations(team));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ message: 'Too many requests.', code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(rateHeaders(refused)).toEqual({ limit: '10', remaining: '0', reset: refused.headers['retry-after'] });
    // Ten allowed in all, one more at most for the interval in which A had not heard of B.
    expect(1 + 5 + 1 + allowedOnA).toBeLessThanOrEqual(11);
  });

  it('lets a replica that has not seen a team learn its level at its next sync, and keeps other teams apart', async () => {
    const [busy, quiet] = await Promise.all([bootstrapTeam(system), bootstrapTeam(system)]);
    for (let n = 0; n < 10; n++) expect((await api(a.url, busy.token).get(organizations(busy))).status).toBe(200);
    await synced(a);
    // B decides alone from a full bucket until its next sync (the overshoot of one interval)...
    expect((await api(b.url, busy.token).get(organizations(busy))).status).toBe(200);
    await synced(b);
    // ...which brings it the level A's spending left.
    expect((await api(b.url, busy.token).get(organizations(busy))).status).toBe(429);
    const other = await api(b.url, quiet.token).get(organizations(quiet));
    expect(other.status).toBe(200);
    expect(rateHeaders(other)).toMatchObject({ limit: '10', remaining: '9' });
  });
});

describe('when the token service cannot answer the sync', () => {
  let c: ServiceHandle;
  let d: ServiceHandle;

  beforeAll(async () => {
    // Both replicas reach the token service through the proxy, which can turn their syncs away.
    const env = { TOKEN_SERVICE_ADDR: proxy.address, RATE_LIMIT_TEAM_BURST: '3' };
    [c, d] = await Promise.all([replica(env), replica(env)]);
  });

  afterAll(async () => {
    proxy.blocked = false;
    await Promise.all([c?.stop(), d?.stop()]);
  });

  it('each replica limits on its own, refuses nothing for the failure, and reports the spending once it can', async () => {
    const team = await bootstrapTeam(system);
    proxy.blocked = true;
    const statuses = async (gateway: ServiceHandle, count: number) => {
      const result: number[] = [];
      for (let n = 0; n < count; n++) result.push((await api(gateway.url, team.token).get(organizations(team))).status);
      return result;
    };
    expect(await statuses(c, 1)).toEqual([200]);
    expect(await statuses(d, 1)).toEqual([200]);
    // Each has tried to share the key and failed; the failures are counted.
    await eventually(async () => (await metric(c, 'worklane_worker_failures_total')) >= 1 && (await metric(d, 'worklane_worker_failures_total')) >= 1);

    // Each allows the whole burst of 3 on its own, then refuses.
    expect(await statuses(c, 3)).toEqual([200, 200, 429]);
    expect(await statuses(d, 3)).toEqual([200, 200, 429]);
    expect(c.logs()).toMatch(/background worker pass failed/);

    // Back: the 6 spent while apart reach the shared bucket, which both replicas then follow.
    proxy.blocked = false;
    await synced(c);
    await synced(d);
    await synced(c);
    for (const gateway of [c, d]) {
      const response = await api(gateway.url, team.token).get(organizations(team));
      expect(response.status).toBe(429);
      expect(rateHeaders(response)).toMatchObject({ limit: '3', remaining: '0' });
    }
  });
});

describe('RateLimit headers', () => {
  let e: ServiceHandle;

  beforeAll(async () => {
    e = await replica();
  });

  afterAll(async () => {
    await e?.stop();
  });

  it('are on every answer after authentication, for the tighter allowance, and count down with what is spent', async () => {
    const [team, other] = await Promise.all([bootstrapTeam(system), bootstrapTeam(system)]);
    const client = api(e.url, team.token);

    const ok = await client.get(organizations(team));
    expect(ok.status).toBe(200);
    // The team's allowance (10) is tighter than the token's (1000).
    expect(rateHeaders(ok)).toEqual({ limit: '10', remaining: '9', reset: expect.stringMatching(/^[1-9]\d*$/) });

    const missing = await client.get(`${organizations(team)}/999999999/projects`);
    expect(missing.status).toBe(404);
    expect(rateHeaders(missing)).toMatchObject({ limit: '10', remaining: '8' });

    const badBody = await client.post(organizations(team), '{"name": ', { raw: true });
    expect(badBody.status).toBe(400);
    expect(rateHeaders(badBody)).toMatchObject({ limit: '10', remaining: '7' });

    const unavailable = await client.get(`/teams/${team.team_id}/webhooks`);
    expect(unavailable.status).toBe(503);
    expect(rateHeaders(unavailable)).toMatchObject({ limit: '10', remaining: '6' });

    // Another team's path: 403, and nothing spent.
    const forbidden = await client.get(organizations(other));
    expect(forbidden.status).toBe(403);
    expect(rateHeaders(forbidden)).toMatchObject({ limit: '10', remaining: '6' });

    // Not authenticated, or not an API operation: no allowance to tell.
    const anonymous = await api(e.url, 'wl_nope').get(organizations(team));
    expect(anonymous.status).toBe(401);
    expect(rateHeaders(anonymous)).toEqual({ limit: undefined, remaining: undefined, reset: undefined });
    const document = await api(e.url).get('/openapi.json');
    expect(document.status).toBe(200);
    expect(document.headers['ratelimit-limit']).toBeUndefined();

    let last = unavailable;
    for (let n = 0; n < 6; n++) {
      last = await client.get(organizations(team));
      expect(last.status).toBe(200);
    }
    expect(rateHeaders(last)).toMatchObject({ remaining: '0' });
    const refused = await client.get(organizations(team));
    expect(refused.status).toBe(429);
    expect(rateHeaders(refused)).toEqual({ limit: '10', remaining: '0', reset: refused.headers['retry-after'] });
  });
});
