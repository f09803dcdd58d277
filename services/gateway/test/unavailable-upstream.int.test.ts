// One service behind the gateway down, missing or too slow: the gateway stays ready, that
// service's routes answer the API's one 503 (service_unavailable, Retry-After), and every other
// route keeps working (docs/operations.md).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { api, bootstrapTeam, startSystem, type BootstrapResult, type System } from '@worklane/testing';
import { direct, eventually } from './support';

jest.setTimeout(180_000);

const UNAVAILABLE = { message: 'Service unavailable.', code: 'service_unavailable' };
const RETRY_AFTER = '7';

let system: System;
let team: BootstrapResult;

const base = () => `/teams/${team.team_id}`;
const projects = () => `${base()}/organizations/${team.organization_id}/projects`;
const issues = () => `${projects()}/1/issues`;
const webhooks = () => `${base()}/webhooks`;
const deliveries = () => `${webhooks()}/1/deliveries`;

beforeAll(async () => {
  // The issue service is configured at a port nobody listens on, the delivery service not at all.
  system = await startSystem({
    services: ['token', 'project', 'webhook', 'gateway'],
    serviceEnv: {
      gateway: { ISSUE_SERVICE_URL: 'http://127.0.0.1:9', DELIVERY_SERVICE_URL: '', CONSOLE_SERVICE_URL: '', UNAVAILABLE_RETRY_AFTER_SECONDS: RETRY_AFTER },
    },
    readyPaths: { gateway: '/readyz' },
  });
  team = await bootstrapTeam(system);
});

afterAll(async () => {
  await system?.stop();
});

async function expectUnavailable(gateway: string, path: string): Promise<void> {
  const response = await api(gateway, team.token).get(path);
  expect([path, response.status]).toEqual([path, 503]);
  expect(response.body).toEqual(UNAVAILABLE);
  expect(response.headers['retry-after']).toBe(RETRY_AFTER);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.headers['x-request-id']).toBeTruthy();
}

describe('a service behind the gateway that is down', () => {
  it('leaves the gateway ready and the other routes working; its own routes answer 503 with Retry-After', async () => {
    expect((await direct(system.gatewayUrl, 'GET', '/readyz')).status).toBe(200);
    // Refused (nothing listens) and not configured: the same answer.
    await expectUnavailable(system.gatewayUrl, issues());
    await expectUnavailable(system.gatewayUrl, deliveries());
    expect((await api(system, team.token).get(projects())).status).toBe(200);
    expect((await api(system, team.token).get(webhooks())).status).toBe(200);
    // The gateway's own routes.
    expect((await direct(system.gatewayUrl, 'GET', '/api/v1/openapi.json')).status).toBe(200);
    expect((await direct(system.gatewayUrl, 'GET', '/readyz')).status).toBe(200);
  });

  it('takes only its own routes down when it stops, and they come back with it', async () => {
    const webhook = system.services.webhook!;
    expect((await api(system, team.token).get(webhooks())).status).toBe(200);

    await webhook.kill();
    await expectUnavailable(system.gatewayUrl, webhooks());
    await expectUnavailable(system.gatewayUrl, `${webhooks()}/1`);
    expect((await direct(system.gatewayUrl, 'GET', '/readyz')).status).toBe(200);
    expect((await api(system, team.token).get(projects())).status).toBe(200);

    await webhook.restart();
    await eventually(async () => (await api(system, team.token).get(webhooks())).status === 200);
  });
});

describe('a service behind the gateway that does not answer in time', () => {
  let silent: http.Server;

  beforeAll(async () => {
    // Accepts every request and never answers it.
    silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('is the same 503 with Retry-After once UPSTREAM_TIMEOUT_MS has passed, never a 504', async () => {
    const gateway = await system.startService(
      'gateway',
      { ISSUE_SERVICE_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, UPSTREAM_TIMEOUT_MS: '500' },
      { readyPath: '/readyz' },
    );
    await expectUnavailable(gateway.url, issues());
    expect((await api(gateway.url, team.token).get(projects())).status).toBe(200);
    expect((await direct(gateway.url, 'GET', '/readyz')).status).toBe(200);
    await gateway.stop();
  });
});
