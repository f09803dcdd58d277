// Idempotency-Key on the project service's POSTs through the gateway: a retried create is
// answered with the first answer (Location included) and creates one organization or project; a
// refusal for the team's quota is kept and replayed like any answer the data decided.
import { randomUUID } from 'node:crypto';
import { api, bootstrapTeam, startSystem, type ApiClient, type BootstrapResult, type System } from '@worklane/testing';

let system: System;
let team: BootstrapResult;
let client: ApiClient;

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'gateway', 'project'], serviceEnv: { project: { TEAM_MAX_ORGANIZATIONS: 3 } } });
  team = await bootstrapTeam(system);
  client = api(system, team.token);
}, 120_000);
afterAll(async () => {
  await system?.stop();
});

const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });
const organizations = () => `/teams/${team.team_id}/organizations`;
const projects = () => `/teams/${team.team_id}/organizations/${team.organization_id}/projects`;

describe('Idempotency-Key on the project service', () => {
  it('creates a project once and replays its answer with the same Location', async () => {
    const key = randomUUID();
    const first = await client.post(projects(), { name: 'Replayed project' }, withKey(key));
    expect(first.status).toBe(201);
    const retry = await client.post(projects(), { name: 'Replayed project' }, withKey(key));
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers.location).toBe(first.headers.location);
    expect(retry.text).toBe(first.text);
    const list = await client.get(projects());
    expect(list.body.data.filter((project: { name: string }) => project.name === 'Replayed project')).toHaveLength(1);

    const otherBody = await client.post(projects(), { name: 'Another project' }, withKey(key));
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.code).toBe('idempotency_key_reused');
  });

  it('creates an organization once; the same key on another operation is another request', async () => {
    const key = randomUUID();
    const first = await client.post(organizations(), { name: 'Replayed org' }, withKey(key));
    expect(first.status).toBe(201);
    const retry = await client.post(organizations(), { name: 'Replayed org' }, withKey(key));
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    // Keys are scoped to the operation: creating a project with it is a request of its own.
    const project = await client.post(projects(), { name: 'Same key, other operation' }, withKey(key));
    expect(project.status).toBe(201);
    expect(project.headers['idempotent-replayed']).toBeUndefined();
  });

  it('keeps a quota refusal (409) for its key, while a new key is refused afresh', async () => {
    // The bootstrap made one organization and the test above one more: one slot is left of 3.
    expect((await client.post(organizations(), { name: 'Last slot' })).status).toBe(201);
    const key = randomUUID();
    const refused = await client.post(organizations(), { name: 'Over quota' }, withKey(key));
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('quota_exceeded');
    const again = await client.post(organizations(), { name: 'Over quota' }, withKey(key));
    expect(again.status).toBe(409);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(refused.body);
  });
});
