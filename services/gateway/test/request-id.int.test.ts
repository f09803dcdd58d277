// X-Request-Id and the access log, through a real gateway in front of real services: the id is
// accepted when well formed, made otherwise, returned on every answer (the gateway's own errors
// too), forwarded to the service, carried by the service's log lines of that request, and the
// gateway writes one access-log line per request without any secret in it.
import { api, bootstrapTeam, startSystem, type BootstrapResult, type System } from '@worklane/testing';
import { direct, eventually } from './support';

jest.setTimeout(120_000);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let system: System;
let alice: BootstrapResult;

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'project', 'webhook', 'gateway'] });
  alice = await bootstrapTeam(system);
});

afterAll(async () => {
  await system?.stop();
});

const projects = () => `/teams/${alice.team_id}/organizations/${alice.organization_id}/projects`;

/** The JSON log lines of a service that carry `requestId`. */
const linesOf = (service: 'gateway' | 'webhook', requestId: string) =>
  system.services[service]!.logs()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.request_id === requestId);

describe('X-Request-Id', () => {
  it('returns the id the client sent when it is well formed', async () => {
    const response = await api(system, alice.token).get(projects(), { headers: { 'x-request-id': 'client-chosen.id:42_A-b' } });
    expect(response.status).toBe(200);
    expect(response.headers['x-request-id']).toBe('client-chosen.id:42_A-b');
  });

  it.each([
    ['too long', 'a'.repeat(129)],
    ['with a space', 'has space'],
    ['with a quote', 'x"y'],
    ['with a line break encoded', 'a%0Ab'],
  ])('replaces an id %s with one of its own, never echoing it', async (_case, sent) => {
    const response = await api(system, alice.token).get(projects(), { headers: { 'x-request-id': sent } });
    expect(response.headers['x-request-id']).toMatch(UUID);
    expect(response.text).not.toContain(sent);
  });

  it('makes one when none is sent, different for each request', async () => {
    const [first, second] = await Promise.all([api(system, alice.token).get(projects()), api(system, alice.token).get(projects())]);
    expect(first.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).toMatch(UUID);
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
  });

  it('is on the answers the gateway gives itself: 401, 404, 405, the API description and the probes', async () => {
    for (const response of [
      await api(system).get(projects()),
      await api(system, alice.token).get('/teams/1/unknown'),
      await api(system, alice.token).request('PUT', projects()),
      await api(system).get('/openapi.json'),
    ]) {
      expect(response.headers['x-request-id']).toMatch(UUID);
      expect(response.body.code ?? response.body.openapi).toBeDefined();
    }
    expect((await direct(system.gatewayUrl, 'GET', '/healthz')).headers['x-request-id']).toMatch(UUID);
  });

  it('reaches the service, whose log lines of that request carry it', async () => {
    const requestId = `refused-url-${Date.now()}`;
    // The webhook service logs why it refuses a receiver address.
    const response = await api(system, alice.token).post(
      `/teams/${alice.team_id}/webhooks`,
      { url: 'https://10.1.2.3/hook', events: ['issue.created'] },
      { headers: { 'x-request-id': requestId } },
    );
    expect(response.status).toBe(422);
    expect(response.headers['x-request-id']).toBe(requestId);
    await eventually(async () => linesOf('webhook', requestId).some((line) => line.msg === 'webhook url refused'));
  });
});

describe('the access log', () => {
  it('has one line per request with the route template, status, duration and team, and no secret', async () => {
    const requestId = `access-log-${Date.now()}`;
    const response = await api(system, alice.token).post(projects(), { name: 'Logged' }, { headers: { 'x-request-id': requestId } });
    expect(response.status).toBe(201);
    await eventually(async () => linesOf('gateway', requestId).some((line) => line.msg === 'request'));
    const lines = linesOf('gateway', requestId).filter((line) => line.msg === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      service: 'gateway',
      method: 'POST',
      route: '/api/v1/teams/:team/organizations/:organization/projects',
      status: 201,
      team_id: alice.team_id,
      duration_ms: expect.any(Number),
    });
    const text = JSON.stringify(lines[0]);
    expect(text).not.toContain(alice.token);
    expect(text).not.toMatch(/authorization|cookie|x-worklane/i);
    expect(text).not.toContain(`/organizations/${alice.organization_id}/`);
  });

  it('logs refused requests too, without a team before authentication', async () => {
    const requestId = `refused-${Date.now()}`;
    const response = await api(system, 'wl_000000000000000000000000000000000000').get(projects(), { headers: { 'x-request-id': requestId } });
    expect(response.status).toBe(401);
    await eventually(async () => linesOf('gateway', requestId).some((line) => line.msg === 'request'));
    const [line] = linesOf('gateway', requestId).filter((candidate) => candidate.msg === 'request');
    expect(line).toMatchObject({ status: 401, route: '/api/v1/teams/:team/organizations/:organization/projects' });
    expect(line).not.toHaveProperty('team_id');
    expect(JSON.stringify(line)).not.toContain('wl_000000');
  });
});
