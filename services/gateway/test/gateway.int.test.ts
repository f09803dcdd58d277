// The public API's edge, through a real gateway in front of the whole system: every error case
// of the README's API table that the gateway answers, team isolation, the identity it forwards, what
// the services do with identities the gateway did not sign, the console behind it, readiness and
// every service's metrics.
import { parsePrivateKey } from '@worklane/config';
import { api, bootstrapTeam, createToken, revokeToken, signerOf, signingKeyPair, startSystem, type BootstrapResult, type System } from '@worklane/testing';
import { direct, parseMetrics, rawStatus, samples, signed, type Sample } from './support';

jest.setTimeout(120_000);

let system: System;
let alice: BootstrapResult;
let bob: BootstrapResult;

const projects = (team: BootstrapResult) => `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;

beforeAll(async () => {
  // Every service: startSystem returns once each one's /readyz says it is ready, the gateway last.
  // Webhooks may point at this machine (no outside DNS in tests); nothing listens there.
  system = await startSystem({ env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' } });
  [alice, bob] = await Promise.all([bootstrapTeam(system), bootstrapTeam(system)]);
});

afterAll(async () => {
  await system?.stop();
});

describe('readiness', () => {
  it('reports ready on /readyz and alive on /healthz', async () => {
    expect((await direct(system.gatewayUrl, 'GET', '/readyz')).status).toBe(200);
    expect((await direct(system.gatewayUrl, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
  });
});

describe('the console behind the gateway', () => {
  it('serves pages outside /api without an API token, from the console service', async () => {
    const login = await direct(system.gatewayUrl, 'GET', '/login', { accept: 'text/html' });
    expect(login.status).toBe(200);
    expect(login.headers['content-type']).toMatch(/^text\/html/);
    expect(login.text).toMatch(/<form/i);
  });

  it('keeps /api for the API: an unknown API path is the API’s 404, not a console page', async () => {
    const response = await direct(system.gatewayUrl, 'GET', '/api/v1/login', { accept: 'text/html' });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: 'Not found.', code: 'not_found' });
  });
});

describe('routes at the gateway', () => {
  it('answers 404 JSON for a path the API does not have, before asking for a token', async () => {
    for (const path of ['/nothing', `/teams/${alice.team_id}/nothing`, `/teams/${alice.team_id}/webhooks/1/nothing`]) {
      const response = await api(system).get(path);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'Not found.', code: 'not_found' });
    }
    expect((await api(system, alice.token).get('/teams/1/organizations/2/projects/3/extra')).status).toBe(404);
  });

  it('answers 400 for a request target that is not a path (absolute-form, as sent to forward proxies)', async () => {
    const port = system.services.gateway!.httpPort;
    const target = `http://elsewhere.example/api/v1${projects(alice)}`;
    expect(await rawStatus(port, `GET ${target} HTTP/1.1\r\nHost: elsewhere.example\r\nAuthorization: Bearer ${alice.token}\r\nConnection: close\r\n\r\n`)).toBe(400);
  });

  it('answers 404 for a non-integer team or id', async () => {
    const client = api(system, alice.token);
    expect((await client.get('/teams/abc/webhooks')).body).toEqual({ message: 'Not found.', code: 'not_found' });
    expect((await client.get(`/teams/${alice.team_id}/organizations/x/projects`)).status).toBe(404);
    expect((await client.patch(`/teams/${alice.team_id}/organizations/${alice.organization_id}/projects/1.5`, { name: 'x' })).status).toBe(404);
  });

  it('answers 405 with Allow for a known path and a method it does not take', async () => {
    const response = await api(system, alice.token).put(projects(alice), { name: 'x' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, POST, HEAD');
    expect(response.body).toEqual({ message: 'Method not allowed.', code: 'method_not_allowed' });
    const webhook = await api(system).request('POST', `/teams/${alice.team_id}/webhooks/1`);
    expect(webhook.status).toBe(405);
    expect(webhook.headers.allow).toBe('GET, PATCH, DELETE, HEAD');
  });

  it('forwards a valid request and returns the service answer as it is', async () => {
    const created = await api(system, alice.token).post(projects(alice), { name: 'Through The Gateway' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ organization_id: alice.organization_id, name: 'Through The Gateway', slug: 'through-the-gateway' });
    const listed = await api(system, alice.token).get(projects(alice));
    expect(listed.body.data.map((project: { id: number }) => project.id)).toContain(created.body.id);
  });

  it('sends the body byte for byte', async () => {
    const raw = '{\n  "name": "Spaced  \\u0041ut",\n  "description": "kept",\n  "id": 999\n}';
    const created = await api(system, alice.token).post(projects(alice), raw, { raw: true });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Spaced  Aut', description: 'kept' });
    expect(created.body.id).not.toBe(999);
  });
});

describe('authentication', () => {
  const unauthenticated = { message: 'Unauthenticated.', code: 'unauthenticated' };

  it('answers 401 without an Authorization header', async () => {
    const response = await api(system).get(projects(alice));
    expect(response.status).toBe(401);
    expect(response.body).toEqual(unauthenticated);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="worklane"');
  });

  it('answers 401 for a header that is not a bearer token', async () => {
    for (const authorization of [`Basic ${Buffer.from('a:b').toString('base64')}`, 'Bearer', `Bearer ${alice.token} more`, alice.token]) {
      const response = await api(system).get(projects(alice), { headers: { authorization } });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(unauthenticated);
    }
  });

  it('answers 401 for a malformed token, a wrong checksum and a well-formed token never issued', async () => {
    const wrongChecksum = alice.token.slice(0, -1) + (alice.token.endsWith('A') ? 'B' : 'A');
    const neverIssued = 'wl_' + 'A'.repeat(30);
    for (const token of ['not-a-token', wrongChecksum, alice.token.slice(0, -6) + '000000', `${neverIssued}000000`]) {
      const response = await api(system, token).get(projects(alice));
      expect(response.status).toBe(401);
      expect(response.body).toEqual(unauthenticated);
    }
  });

  it('answers 401 for a revoked token', async () => {
    const { token_id, token } = await createToken(system, { teamId: alice.team_id, email: alice.email });
    expect((await api(system, token).get(projects(alice))).status).toBe(200);
    await revokeToken(system, { teamId: alice.team_id, tokenId: token_id });
    const response = await api(system, token).get(projects(alice));
    expect(response.status).toBe(401);
    expect(response.body).toEqual(unauthenticated);
  });
});

describe('team isolation', () => {
  it("answers 403 for another team's path, on every route and verb", async () => {
    const client = api(system, alice.token);
    const other = `/teams/${bob.team_id}`;
    const calls = [
      client.get(`${other}/organizations`),
      client.post(`${other}/organizations`, { name: 'x' }),
      client.get(projects(bob)),
      client.post(projects(bob), { name: 'x' }),
      client.get(`${projects(bob)}/1`),
      client.patch(`${projects(bob)}/1`, { name: 'x' }),
      client.get(`${other}/webhooks`),
      client.post(`${other}/webhooks`, { url: 'https://example.com', events: ['issue.created'] }),
      client.get(`${other}/webhooks/1`),
      client.patch(`${other}/webhooks/1`, { active: false }),
      client.delete(`${other}/webhooks/1`),
      client.get(`${projects(bob)}/1/issues`),
      client.post(`${projects(bob)}/1/issues`, { title: 'x' }),
      client.patch(`${projects(bob)}/1/issues/1`, { title: 'x' }),
      client.post(`${other}/webhooks/1/ping`),
      client.get(`${other}/webhooks/1/deliveries`),
      client.get(`${other}/deliveries/0b5c2f1e-9a7d-4f1b-8c3e-2d4a6b8c0e1f`),
      client.post(`${other}/deliveries/0b5c2f1e-9a7d-4f1b-8c3e-2d4a6b8c0e1f/redeliver`),
    ];
    for (const response of await Promise.all(calls)) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ message: 'This action is unauthorized.', code: 'forbidden' });
    }
  });

  it('answers 403 for a team that does not exist, as for one that does', async () => {
    const response = await api(system, alice.token).get('/teams/987654321/webhooks');
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ message: 'This action is unauthorized.', code: 'forbidden' });
  });

  it('replaces identity headers a client sends with the identity of its token', async () => {
    const forged = signed(signerOf(system.keys.signing, 'gateway'), 'GET', `/api/v1${projects(bob)}`, { teamId: bob.team_id, userId: bob.user_id, tokenId: bob.token_id });
    const own = await api(system, alice.token).get(projects(alice), { headers: forged });
    expect(own.status).toBe(200);
    const other = await api(system, alice.token).get(projects(bob), { headers: forged });
    expect(other.status).toBe(403);
  });
});

describe('bodies', () => {
  const client = () => api(system, alice.token);

  it('answers 413 for a body over 1 MiB', async () => {
    const response = await client().post(projects(alice), { name: 'x', description: 'y'.repeat(1024 * 1024) });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ message: 'The request body is too large.', code: 'payload_too_large' });
  });

  it('answers 415 for a body that is not JSON', async () => {
    const response = await client().post(projects(alice), 'name=x', { raw: true, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(response.status).toBe(415);
    expect(response.body).toEqual({ message: 'The request body must be JSON (Content-Type: application/json).', code: 'unsupported_media_type' });
  });

  it('answers 400 for JSON that does not parse', async () => {
    const response = await client().post(projects(alice), '{"name": "x",', { raw: true });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: 'The request body is not valid JSON.', code: 'bad_request' });
  });

  it('checks the token before reading the body', async () => {
    const response = await api(system, 'wl_nope').post(projects(alice), '{"name": ', { raw: true });
    expect(response.status).toBe(401);
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After once a token has used its allowance', async () => {
    // A replica allowing two requests at once and one per 100 s after that.
    const limited = await system.startService('gateway', { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '2' });
    const { token } = await createToken(system, { teamId: alice.team_id, email: alice.email });
    const client = api(limited.url, token);
    expect((await client.get(projects(alice))).status).toBe(200);
    expect((await client.get(projects(alice))).status).toBe(200);
    const refused = await client.get(projects(alice));
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ message: 'Too many requests.', code: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The allowance is the token's: another token of the same team is not affected.
    expect((await api(limited.url, alice.token).get(projects(alice))).status).toBe(200);
    await limited.stop();
  });

  it("shares one allowance among all of a team's tokens, and leaves other teams alone", async () => {
    // Per token as much as wanted; per team two at once and one per 100 s after that.
    const limited = await system.startService('gateway', { RATE_LIMIT_TEAM_PER_SECOND: '0.01', RATE_LIMIT_TEAM_BURST: '2' });
    const tokens = await Promise.all([1, 2, 3].map(() => createToken(system, { teamId: alice.team_id, email: alice.email })));
    const statuses = [];
    for (const { token } of tokens) statuses.push((await api(limited.url, token).get(projects(alice))).status);
    expect(statuses).toEqual([200, 200, 429]);
    const refused = await api(limited.url, tokens[0]!.token).get(projects(alice));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another team's allowance is its own.
    expect((await api(limited.url, bob.token).get(projects(bob))).status).toBe(200);
    await limited.stop();
  });

  it('counts a large response as one request per started unit of its bytes', async () => {
    // Ten requests at once, none refilled; a response counts one request per started KiB.
    const limited = await system.startService('gateway', {
      RATE_LIMIT_PER_SECOND: '0.001',
      RATE_LIMIT_BURST: '10',
      RATE_LIMIT_RESPONSE_UNIT_BYTES: '1024',
      RATE_LIMIT_REFUSAL_DELAY_MAX_MS: '0',
    });
    const { token } = await createToken(system, { teamId: alice.team_id, email: alice.email });
    const client = api(limited.url, token);
    const small = await client.get(`/teams/${alice.team_id}/webhooks?limit=1`);
    expect(small.status).toBe(200);
    // The OpenAPI document is public and free; a list of at least 8 KiB spends the rest at once.
    const large = await api(system, alice.token).post(projects(alice), { name: 'large', description: 'd'.repeat(9_000) });
    expect(large.status).toBe(201);
    const page = await client.get(projects(alice));
    expect(page.status).toBe(200);
    expect(Buffer.byteLength(JSON.stringify(page.body))).toBeGreaterThan(8 * 1024);
    const refused = await client.get(`/teams/${alice.team_id}/webhooks?limit=1`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await limited.stop();
  });

  it('still answers a held refusal with 429 and Retry-After', async () => {
    const limited = await system.startService('gateway', { RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '1', RATE_LIMIT_REFUSAL_DELAY_MAX_MS: '1000' });
    const { token } = await createToken(system, { teamId: alice.team_id, email: alice.email });
    const client = api(limited.url, token);
    const statuses = await Promise.all(
      [1, 2, 3].map(async () => {
        const response = await client.get(projects(alice));
        if (response.status === 429) expect(response.headers['retry-after']).toBe('1');
        return response.status;
      }),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 429)).toHaveLength(2);
    await limited.stop();
  });
});

describe('services behind the gateway', () => {
  const identity = () => ({ teamId: alice.team_id, userId: alice.user_id, tokenId: alice.token_id });
  const key = () => signerOf(system.keys.signing, 'gateway');

  it.each(['project', 'webhook'] as const)('the %s service refuses a request without a signed identity', async (service) => {
    const path = service === 'project' ? `/api/v1${projects(alice)}` : `/api/v1/teams/${alice.team_id}/webhooks`;
    const base = system.urls[service];
    const good = await direct(base, 'GET', path, signed(key(), 'GET', path, identity()));
    expect(good.status).toBe(200);

    const unsigned = await direct(base, 'GET', path, { 'x-worklane-team-id': String(alice.team_id), 'x-worklane-user-id': '1', 'x-worklane-token-id': '1' });
    const forged = await direct(base, 'GET', path, signed({ name: 'gateway', key: parsePrivateKey(signingKeyPair().privateKey) }, 'GET', path, identity()));
    // The issue and delivery services hold private keys of their own: neither mints identities.
    const byIssue = await direct(base, 'GET', path, signed(signerOf(system.keys.signing, 'issue'), 'GET', path, identity()));
    const deliveryAsGateway = await direct(base, 'GET', path, signed({ name: 'gateway', key: signerOf(system.keys.signing, 'delivery').key }, 'GET', path, identity()));
    const stale = await direct(base, 'GET', path, signed(key(), 'GET', path, identity(), Date.now() - 5 * 60_000));
    const otherPath = await direct(base, 'GET', path, signed(key(), 'GET', `/api/v1/teams/${alice.team_id}/organizations`, identity()));
    const otherMethod = await direct(base, 'GET', path, signed(key(), 'POST', path, identity()));
    const otherTeam = signed(key(), 'GET', path, identity());
    otherTeam['x-worklane-team-id'] = String(bob.team_id);
    const tampered = await direct(base, 'GET', path, otherTeam);
    for (const refused of [unsigned, forged, byIssue, deliveryAsGateway, stale, otherPath, otherMethod, tampered]) {
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ message: 'Unauthenticated.', code: 'unauthenticated' });
    }
  });

  it('answers 503 JSON when the service behind a route is down, never a stack trace', async () => {
    // Ready although its project service is missing: only that service's routes are affected.
    const orphan = await system.startService('gateway', { PROJECT_SERVICE_URL: 'http://127.0.0.1:9' }, { readyPath: '/readyz' });
    const response = await api(orphan.url, alice.token).get(projects(alice));
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ message: 'Service unavailable.', code: 'service_unavailable' });
    expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(response.text).not.toMatch(/ECONNREFUSED|at /);
    await orphan.stop();
  });
});

describe('metrics', () => {
  const scrape = async (base: string) => parseMetrics((await direct(base, 'GET', '/metrics')).text);
  const PROJECTS = '/api/v1/teams/:team/organizations/:organization/projects';

  /** A request count and a latency histogram for the route template, and no raw path anywhere. */
  function expectRouteMetrics(all: Sample[], labels: Record<string, string>) {
    expect(samples(all, 'worklane_http_requests_total', labels)[0]?.value).toBeGreaterThan(0);
    expect(samples(all, 'worklane_http_request_duration_seconds_count', labels)[0]?.value).toBeGreaterThan(0);
    expect(samples(all, 'worklane_http_request_duration_seconds_bucket', labels).length).toBeGreaterThan(5);
    for (const sample of all) expect(sample.labels.route ?? '').not.toMatch(/\/\d+(\/|$)/);
  }

  it('counts and times gateway requests by route template, never by raw path', async () => {
    await api(system, alice.token).get(projects(alice));
    await api(system).get('/no/such/route');
    const all = await scrape(system.metricsUrls.gateway);
    expectRouteMetrics(all, { method: 'GET', route: PROJECTS, status: '200' });
    expectRouteMetrics(all, { method: 'GET', route: 'unmatched', status: '404' });
  });

  it('has the project and webhook services count and time requests by route template', async () => {
    await api(system, alice.token).get(`/teams/${alice.team_id}/webhooks`);
    await api(system, alice.token).post(projects(alice), { name: 'Counted' });
    await api(system, alice.token).get(projects(alice));
    const project = await scrape(system.metricsUrls.project);
    expectRouteMetrics(project, { method: 'GET', route: PROJECTS, status: '200' });
    expectRouteMetrics(project, { method: 'POST', route: PROJECTS, status: '201' });
    expectRouteMetrics(await scrape(system.metricsUrls.webhook), { method: 'GET', route: '/api/v1/teams/:team/webhooks', status: '200' });
  });

  it('has the issue, delivery and console services count and time requests by route template', async () => {
    const project = await api(system, alice.token).post(projects(alice), { name: 'Issues Here' });
    const issues = `${projects(alice)}/${project.body.id}/issues`;
    expect((await api(system, alice.token).post(issues, { title: 'Counted issue' })).status).toBe(201);
    const webhook = await api(system, alice.token).post(`/teams/${alice.team_id}/webhooks`, { url: 'https://127.0.0.1:9/hook', events: ['issue.created'] });
    expect(webhook.status).toBe(201);
    expect((await api(system, alice.token).get(`/teams/${alice.team_id}/webhooks/${webhook.body.id}/deliveries`)).status).toBe(200);
    await direct(system.gatewayUrl, 'GET', '/login');

    const TEAM = '/api/v1/teams/:team';
    expectRouteMetrics(await scrape(system.metricsUrls.issue), {
      method: 'POST',
      route: `${TEAM}/organizations/:organization/projects/:project/issues`,
      status: '201',
    });
    expectRouteMetrics(await scrape(system.metricsUrls.delivery), { method: 'GET', route: `${TEAM}/webhooks/:webhook/deliveries`, status: '200' });
    expectRouteMetrics(await scrape(system.metricsUrls.console), { method: 'GET', route: '/login', status: '200' });
  });

  it('serves metrics on the metrics ports only: the public and API ports answer 404 for /metrics', async () => {
    const atGateway = await direct(system.gatewayUrl, 'GET', '/metrics');
    expect(atGateway.status).toBe(404);
    expect(atGateway.text).not.toContain('worklane_');
    // Nor can a client reach a service's metrics through the gateway's routes.
    expect((await api(system, alice.token).get('/metrics')).status).toBe(404);
    for (const name of ['token', 'project', 'webhook', 'issue', 'delivery', 'console'] as const) {
      const response = await direct(system.urls[name], 'GET', '/metrics');
      expect({ name, metrics: /^# (HELP|TYPE) /m.test(response.text) }).toEqual({ name, metrics: false });
      if (name !== 'console') expect({ name, status: response.status }).toEqual({ name, status: 404 });
    }
    const scraped = await direct(system.metricsUrls.gateway, 'GET', '/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.headers['content-type']).toMatch(/^text\/plain/);
    // The metrics listener serves nothing else.
    expect((await direct(system.metricsUrls.gateway, 'GET', '/readyz')).status).toBe(404);
  });

  it('has the token service count and time its gRPC calls by method', async () => {
    await api(system, alice.token).get(projects(alice));
    await api(system, 'wl_' + 'A'.repeat(36)).get(projects(alice));
    const all = await scrape(system.metricsUrls.token);
    const authenticate = '/worklane.token.v1.TokenService/Authenticate';
    for (const code of ['OK', 'UNAUTHENTICATED']) {
      expect(samples(all, 'worklane_grpc_requests_total', { method: authenticate, code })[0]?.value).toBeGreaterThan(0);
      expect(samples(all, 'worklane_grpc_request_duration_seconds_bucket', { method: authenticate, code }).length).toBeGreaterThan(5);
    }
  });
});
