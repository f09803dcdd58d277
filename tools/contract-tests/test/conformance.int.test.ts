// The running system against its OpenAPI document: every operation is called through a real
// gateway in front of the real services, and each answer (success and errors) must be documented
// for that operation and validate against the documented schema and headers. A field a service
// adds without documenting it, a status nobody wrote down, or a missing header fails here.
import { API_STACK, api, bootstrapTeam, startSystem, type ApiClient, type ApiResponse, type BootstrapResult, type System } from '@worklane/testing';
import { ContractChecker } from '../src/contract-checker';

jest.setTimeout(120_000);

const MAX_WEBHOOKS = 3;

let system: System;
let alice: BootstrapResult;
let bob: BootstrapResult;
let client: ApiClient;
const checker = new ContractChecker();

beforeAll(async () => {
  system = await startSystem({
    services: [...API_STACK],
    // Webhooks may point at this machine (no outside DNS in tests); nothing needs to listen there.
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', TEAM_MAX_WEBHOOKS: String(MAX_WEBHOOKS), LOG_LEVEL: 'warn' },
  });
  [alice, bob] = await Promise.all([bootstrapTeam(system), bootstrapTeam(system)]);
  client = api(system, alice.token);
});

afterAll(async () => {
  await system?.stop();
});

/** Asserts that `response` is a documented answer of `operationId`, and returns it. */
function conforms<T = any>(operationId: string, response: ApiResponse<T>, status?: number): ApiResponse<T> {
  expect(checker.problems(operationId, response)).toEqual([]);
  if (status !== undefined) expect(response.status).toBe(status);
  return response;
}

const team = (owner: BootstrapResult = alice) => `/teams/${owner.team_id}`;

describe('every operation answers as documented', () => {
  let organizationId: number;
  let projectId: number;
  let issueId: number;
  let webhookId: number;
  let deliveryId: string;

  const projects = () => `${team()}/organizations/${organizationId}/projects`;
  const issues = () => `${projects()}/${projectId}/issues`;

  it('serves its own description without a token', async () => {
    const response = conforms('getApiDescription', await api(system).get('/openapi.json'), 200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(Object.keys(response.body.paths).length).toBeGreaterThan(10);
  });

  it('organizations', async () => {
    const created = conforms('createOrganization', await client.post(`${team()}/organizations`, { name: 'Platform' }), 201);
    organizationId = created.body.id;
    conforms('listOrganizations', await client.get(`${team()}/organizations`), 200);
    const page = conforms('listOrganizations', await client.get(`${team()}/organizations`, { query: { limit: 1 } }), 200);
    expect(page.body.next_cursor).not.toBeNull();
    conforms('listOrganizations', await client.get(`${team()}/organizations`, { query: { cursor: page.body.next_cursor } }), 200);
    conforms('createOrganization', await client.post(`${team()}/organizations`, {}), 422);
    conforms('listOrganizations', await client.get(`${team()}/organizations`, { query: { limit: 0 } }), 422);
    conforms('listOrganizations', await client.get(`${team()}/organizations`, { query: { cursor: 'not-a-cursor' } }), 422);
  });

  it('projects', async () => {
    const created = conforms('createProject', await client.post(projects(), { name: 'Backend API', github_repository: 'acme/backend-api' }), 201);
    projectId = created.body.id;
    expect(created.headers.location).toBe(`/api/v1${projects()}/${projectId}`);
    conforms('createProject', await client.post(projects(), { name: 'Second', description: 'More' }), 201);
    conforms('listProjects', await client.get(projects()), 200);
    conforms('listProjects', await client.get(projects(), { query: { limit: 1 } }), 200);
    conforms('getProject', await client.get(`${projects()}/${projectId}`), 200);
    conforms('updateProject', await client.patch(`${projects()}/${projectId}`, { description: 'The public API', github_repository: null }), 200);
    conforms('updateProject', await client.patch(`${projects()}/${projectId}`, { name: null }), 422);
    conforms('getProject', await client.get(`${projects()}/999999`), 404);
    conforms('createProject', await client.post(`${team()}/organizations/999999/projects`, { name: 'Nowhere' }), 404);
  });

  it('issues', async () => {
    const created = conforms(
      'createIssue',
      await client.post(issues(), { title: 'Checkout fails on Safari', type: 'bug', estimated_date: '2026-02-01', url: 'https://example.com/1' }),
      201,
    );
    issueId = created.body.id;
    conforms('createIssue', await client.post(issues(), { title: 'Second' }), 201);
    conforms('listIssues', await client.get(issues()), 200);
    conforms('listIssues', await client.get(issues(), { query: { limit: 1 } }), 200);
    conforms('getIssue', await client.get(`${issues()}/${issueId}`), 200);
    conforms('updateIssue', await client.patch(`${issues()}/${issueId}`, { status: 'in_progress', assigned_to: alice.user_id }), 200);
    conforms('updateIssue', await client.patch(`${issues()}/${issueId}`, { assigned_to: bob.user_id }), 422);
    conforms('createIssue', await client.post(issues(), { title: '' }), 422);
    conforms('getIssue', await client.get(`${issues()}/999999`), 404);
  });

  it('webhooks', async () => {
    const body = { url: 'https://127.0.0.1:9/worklane', events: ['issue.created', 'issue.updated'], secret: 'a-very-secret-signing-key' };
    const created = conforms('createWebhook', await client.post(`${team()}/webhooks`, body), 201);
    webhookId = created.body.id;
    expect(created.body).not.toHaveProperty('secret');
    conforms('listWebhooks', await client.get(`${team()}/webhooks`), 200);
    conforms('listWebhooks', await client.get(`${team()}/webhooks`, { query: { limit: 1 } }), 200);
    conforms('getWebhook', await client.get(`${team()}/webhooks/${webhookId}`), 200);
    conforms('updateWebhook', await client.patch(`${team()}/webhooks/${webhookId}`, { events: ['issue.created'] }), 200);
    conforms('createWebhook', await client.post(`${team()}/webhooks`, { url: 'http://example.com', events: [] }), 422);
    const rotate = (id: number, rotation?: object) => client.post(`${team()}/webhooks/${id}/secret/rotate`, rotation);
    expect(conforms('rotateWebhookSecret', await rotate(webhookId), 200).body.secret).toEqual(expect.any(String));
    conforms('rotateWebhookSecret', await rotate(webhookId, { overlap_seconds: 999_999_999 }), 422);
    conforms('rotateWebhookSecret', await rotate(999_999_999, {}), 404);
    for (let rotation = 0; rotation < 4; rotation += 1) conforms('rotateWebhookSecret', await rotate(webhookId, { overlap_seconds: 60 }), 200);
    expect(conforms('rotateWebhookSecret', await rotate(webhookId, { overlap_seconds: 60 }), 409).body.code).toBe('secret_rotation_limit');
  });

  it('deliveries', async () => {
    const ping = conforms('pingWebhook', await client.post(`${team()}/webhooks/${webhookId}/ping`), 201);
    deliveryId = ping.body.id;
    conforms('listDeliveries', await client.get(`${team()}/webhooks/${webhookId}/deliveries`), 200);
    conforms('getWebhookHealth', await client.get(`${team()}/webhooks/${webhookId}/health`), 200);
    conforms('getWebhookHealth', await client.get(`${team()}/webhooks/999999999/health`), 404);
    conforms('getDelivery', await client.get(`${team()}/deliveries/${deliveryId}`), 200);
    conforms('redeliver', await client.post(`${team()}/deliveries/${deliveryId}/redeliver`), 201);
    conforms('listDeliveries', await client.get(`${team()}/webhooks/${webhookId}/deliveries`, { query: { status: 'pending', event: 'ping', event_id: ping.body.event_id } }), 200);
    conforms('listDeliveries', await client.get(`${team()}/webhooks/${webhookId}/deliveries`, { query: { status: 'lost' } }), 422);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const recovery = conforms('recoverWebhook', await client.post(`${team()}/webhooks/${webhookId}/recover`, { since }), 202);
    expect(recovery.headers.location).toBe(`/api/v1${team()}/webhooks/${webhookId}/recoveries/${recovery.body.id}`);
    conforms('getRecovery', await client.get(`${team()}/webhooks/${webhookId}/recoveries/${recovery.body.id}`), 200);
    conforms('getRecovery', await client.get(`${team()}/webhooks/${webhookId}/recoveries/999999999`), 404);
    conforms('recoverWebhook', await client.post(`${team()}/webhooks/${webhookId}/recover`, { since: 'yesterday' }), 422);
    conforms('getDelivery', await client.get(`${team()}/deliveries/00000000-0000-4000-8000-000000000000`), 404);

    conforms('updateWebhook', await client.patch(`${team()}/webhooks/${webhookId}`, { active: false }), 200);
    const inactive = conforms('pingWebhook', await client.post(`${team()}/webhooks/${webhookId}/ping`), 409);
    expect(inactive.body.code).toBe('webhook_inactive');
    const notRecovered = conforms('recoverWebhook', await client.post(`${team()}/webhooks/${webhookId}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() }), 409);
    expect(notRecovered.body.code).toBe('webhook_inactive');
    const redeliver = conforms('redeliver', await client.post(`${team()}/deliveries/${deliveryId}/redeliver`), 409);
    expect(redeliver.body.code).toBe('webhook_inactive');
  });

  it('deletes a webhook, and a redelivery to it is a conflict', async () => {
    conforms('deleteWebhook', await client.delete(`${team()}/webhooks/${webhookId}`), 204);
    conforms('deleteWebhook', await client.delete(`${team()}/webhooks/${webhookId}`), 404);
    const gone = conforms('redeliver', await client.post(`${team()}/deliveries/${deliveryId}/redeliver`), 409);
    expect(gone.body.code).toBe('webhook_deleted');
  });

  it('a quota refusal', async () => {
    const webhooks: number[] = [];
    for (let i = 0; i < MAX_WEBHOOKS; i++)
      webhooks.push(conforms('createWebhook', await client.post(`${team()}/webhooks`, { url: `https://127.0.0.1:9/${i}`, events: ['issue.created'] }), 201).body.id);
    const refused = conforms('createWebhook', await client.post(`${team()}/webhooks`, { url: 'https://127.0.0.1:9/more', events: ['issue.created'] }), 409);
    expect(refused.body).toMatchObject({ code: 'quota_exceeded', limit: MAX_WEBHOOKS });
    for (const id of webhooks) conforms('deleteWebhook', await client.delete(`${team()}/webhooks/${id}`), 204);
  });

  it('saw every operation succeed', () => {
    expect(checker.withoutSuccess()).toEqual([]);
  });
});

describe('the errors of the edge are documented for the operations that give them', () => {
  it('401 without a token or with an unknown one', async () => {
    conforms('listWebhooks', await api(system).get(`${team()}/webhooks`), 401);
    conforms('createIssue', await api(system, 'wl_000000000000000000000000000000000000').post(`${team()}/organizations/1/projects/1/issues`, { title: 'x' }), 401);
  });

  it('403 for another team’s path, whether or not the id exists', async () => {
    conforms('listOrganizations', await client.get(`${team(bob)}/organizations`), 403);
    conforms('getProject', await client.get(`${team(bob)}/organizations/${bob.organization_id}/projects/1`), 403);
  });

  it('404 for another team’s resources under one’s own team', async () => {
    conforms('listProjects', await client.get(`${team()}/organizations/${bob.organization_id}/projects`), 404);
  });

  it('400, 413 and 415 for bodies that are not usable JSON', async () => {
    const path = `${team()}/organizations`;
    conforms('createOrganization', await client.post(path, '{"name": ', { raw: true }), 400);
    conforms('createOrganization', await client.post(path, 'name=x', { raw: true, headers: { 'content-type': 'text/plain' } }), 415);
    conforms('createOrganization', await client.post(path, { name: 'x'.repeat(1024 * 1024) }), 413);
    conforms('createOrganization', await client.post(path, { name: 'a\u0000b' }), 422);
  });
});
