// Idempotency-Key on POST .../issues through the gateway, against real PostgreSQL: a retry is
// answered with the first answer and creates nothing more; the key is scoped to the team and the
// operation; another body is a 422; a concurrent retry is a 409 or the replay; failed requests and
// crashed ones do not hold the key; expired records are deleted by the service's retention worker.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { requestFingerprint } from '@worklane/http';
import { api, bootstrapTeam, startNatsServer, startSystem, type ApiClient, type BootstrapResult, type NatsServer, type System } from '@worklane/testing';

let nats: NatsServer;
let system: System;
let team: BootstrapResult;
let other: BootstrapResult;
let client: ApiClient;
let db: pg.Pool;

const OPERATION = 'POST /api/v1/teams/:team/organizations/:organization/projects/:project/issues';

async function newProject(owner: BootstrapResult, name: string): Promise<number> {
  const response = await api(system, owner.token).post(`/teams/${owner.team_id}/organizations/${owner.organization_id}/projects`, { name });
  expect(response.status).toBe(201);
  return response.body.id;
}

const issuesPath = (project: number, owner = team) => `/teams/${owner.team_id}/organizations/${owner.organization_id}/projects/${project}/issues`;
const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

async function issueCount(project: number): Promise<number> {
  const list = await client.get(issuesPath(project), { query: { limit: 200 } });
  expect(list.status).toBe(200);
  return list.body.data.length;
}

async function keyRows(key: string): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE key = $1', [key]);
  return rows[0].n;
}

beforeAll(async () => {
  nats = await startNatsServer();
  system = await startSystem({
    services: ['token', 'project', 'issue', 'gateway'],
    // Retention passes every second, so that the test below sees expired records go.
    env: { NATS_URL: nats.url, LOG_LEVEL: 'warn', IDEMPOTENCY_RETENTION_INTERVAL_MS: 1_000 },
  });
  [team, other] = await Promise.all([
    bootstrapTeam(system, { teamName: 'Idempotent', organizationName: 'Idempotent org' }),
    bootstrapTeam(system, { email: 'other-idempotent@example.com', teamName: 'Other', organizationName: 'Other org' }),
  ]);
  client = api(system, team.token);
  db = new pg.Pool({ connectionString: system.databaseUrl, options: `-c search_path=${system.serviceEnv.issue.DATABASE_SCHEMA}`, max: 2 });
}, 120_000);

afterAll(async () => {
  await db?.end();
  await system?.stop();
  await nats?.stop();
});

describe('Idempotency-Key on creating an issue', () => {
  it('answers a retry with the first answer, marked replayed, and creates one issue', async () => {
    const project = await newProject(team, 'Retried');
    const key = randomUUID();
    const first = await client.post(issuesPath(project), { title: 'Once', priority: 'high' }, withKey(key));
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same body with its keys in another order and other spacing is the same request.
    const retry = await client.post(issuesPath(project), '{ "priority": "high",  "title": "Once" }', { ...withKey(key), raw: true });
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['content-type']).toBe(first.headers['content-type']);
    expect(retry.text).toBe(first.text);
    expect(await issueCount(project)).toBe(1);
  });

  it('refuses the key with another body or another path: 422 idempotency_key_reused', async () => {
    const project = await newProject(team, 'Reused');
    const elsewhere = await newProject(team, 'Reused elsewhere');
    const key = randomUUID();
    expect((await client.post(issuesPath(project), { title: 'First' }, withKey(key))).status).toBe(201);

    const otherBody = await client.post(issuesPath(project), { title: 'Second' }, withKey(key));
    expect(otherBody.status).toBe(422);
    expect(otherBody.body).toEqual({ code: 'idempotency_key_reused', message: expect.stringContaining('different request body') });

    const otherPath = await client.post(issuesPath(elsewhere), { title: 'First' }, withKey(key));
    expect(otherPath.status).toBe(422);
    expect(otherPath.body).toEqual({ code: 'idempotency_key_reused', message: expect.stringContaining('another path') });
    expect(await issueCount(project)).toBe(1);
    expect(await issueCount(elsewhere)).toBe(0);
  });

  it('scopes keys to the team: another team with the same key creates its own issue', async () => {
    const key = randomUUID();
    const ours = await client.post(issuesPath(await newProject(team, 'Scoped')), { title: 'Same key' }, withKey(key));
    const theirs = await api(system, other.token).post(issuesPath(await newProject(other, 'Scoped'), other), { title: 'Same key' }, withKey(key));
    expect([ours.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(ours.body.id);
  });

  it('runs concurrent requests with one key once: the others get 409 idempotency_key_in_use or the replay', async () => {
    const project = await newProject(team, 'Concurrent');
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 8 }, () => client.post(issuesPath(project), { title: 'Raced' }, withKey(key))));
    const created = responses.filter((response) => response.status === 201);
    const original = created.filter((response) => response.headers['idempotent-replayed'] === undefined);
    expect(original).toHaveLength(1);
    for (const response of created) expect(response.text).toBe(original[0]!.text);
    for (const response of responses.filter((response) => response.status !== 201)) {
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('idempotency_key_in_use');
      expect(response.headers['retry-after']).toBe('1');
    }
    expect(await issueCount(project)).toBe(1);
    // Once the first has finished, a retry is the replay.
    const after = await client.post(issuesPath(project), { title: 'Raced' }, withKey(key));
    expect(after.status).toBe(201);
    expect(after.headers['idempotent-replayed']).toBe('true');
  });

  it('refuses a malformed key with 400 idempotency_key_invalid and creates nothing', async () => {
    const project = await newProject(team, 'Malformed');
    for (const key of ['k'.repeat(256), 'tab\tinside']) {
      const response = await client.post(issuesPath(project), { title: 'Nope' }, withKey(key));
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ code: 'idempotency_key_invalid', message: expect.any(String) });
    }
    const longest = await client.post(issuesPath(project), { title: 'Longest key' }, withKey(`~ ${'k'.repeat(253)}`));
    expect(longest.status).toBe(201);
    expect(await issueCount(project)).toBe(1);
  });

  it('keeps the answer of a request refused for the data it names (404), and replays it', async () => {
    const key = randomUUID();
    const missing = await client.post(issuesPath(999_999), { title: 'Nowhere' }, withKey(key));
    expect(missing.status).toBe(404);
    const again = await client.post(issuesPath(999_999), { title: 'Nowhere' }, withKey(key));
    expect(again.status).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(missing.text);
  });

  it('releases the key of a request refused for its input (422), so the corrected request can use it', async () => {
    const project = await newProject(team, 'Corrected');
    const key = randomUUID();
    const invalid = await client.post(issuesPath(project), { title: '' }, withKey(key));
    expect(invalid.status).toBe(422);
    expect(invalid.body.code).toBe('validation_failed');
    expect(await keyRows(key)).toBe(0);
    const corrected = await client.post(issuesPath(project), { title: 'Now valid' }, withKey(key));
    expect(corrected.status).toBe(201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
  });

  it('releases the key of a request that failed with a 5xx: the retry runs, once', async () => {
    const project = await newProject(team, 'Failing');
    const key = randomUUID();
    // A write that fails inside the database: the issue and the record of the key roll back together.
    await db.query(`ALTER TABLE issues ADD CONSTRAINT refuse_for_test CHECK (title <> 'Explodes')`);
    try {
      const failed = await client.post(issuesPath(project), { title: 'Explodes' }, withKey(key));
      expect(failed.status).toBe(500);
      expect(await keyRows(key)).toBe(0);
    } finally {
      await db.query('ALTER TABLE issues DROP CONSTRAINT refuse_for_test');
    }
    const retried = await client.post(issuesPath(project), { title: 'Explodes' }, withKey(key));
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await issueCount(project)).toBe(1);
  });

  it('lets a retry take over the key of a request that crashed, once its lease has run out', async () => {
    const project = await newProject(team, 'Crashed');
    const body = { title: 'After a crash' };
    const path = `/api/v1${issuesPath(project)}`;
    const fingerprint = requestFingerprint('POST', path, body);
    // What a process that died after taking its key leaves behind: a lease and no answer.
    const held = async (key: string, lockedFor: string) =>
      db.query(
        `INSERT INTO idempotency_keys (team_id, operation, key, fingerprint, path, lease_token, locked_until, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, now() + $7::interval, now() + interval '1 day')`,
        [team.team_id, OPERATION, key, fingerprint, path, randomUUID(), lockedFor],
      );
    const live = randomUUID();
    await held(live, '1 hour');
    const running = await client.post(issuesPath(project), body, withKey(live));
    expect(running.status).toBe(409);
    expect(running.body.code).toBe('idempotency_key_in_use');

    const crashed = randomUUID();
    await held(crashed, '-1 second');
    const retried = await client.post(issuesPath(project), body, withKey(crashed));
    expect(retried.status).toBe(201);
    expect(await issueCount(project)).toBe(1);
  });

  it('forgets a key once it has expired: the key may then name a new request', async () => {
    const project = await newProject(team, 'Expired');
    const key = randomUUID();
    expect((await client.post(issuesPath(project), { title: 'Old request' }, withKey(key))).status).toBe(201);
    await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
    // Expired (whether or not the retention worker has deleted it yet): a new request.
    const reused = await client.post(issuesPath(project), { title: 'New request' }, withKey(key));
    expect(reused.status).toBe(201);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    expect(await issueCount(project)).toBe(2);
  });

  it('deletes expired records in the background, and keeps the others', async () => {
    const project = await newProject(team, 'Retention');
    const [expired, kept] = [randomUUID(), randomUUID()];
    expect((await client.post(issuesPath(project), { title: 'Expires' }, withKey(expired))).status).toBe(201);
    expect((await client.post(issuesPath(project), { title: 'Stays' }, withKey(kept))).status).toBe(201);
    await db.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [expired]);
    for (let waited = 0; (await keyRows(expired)) > 0; waited += 100) {
      if (waited > 15_000) throw new Error('the expired record was not deleted');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await keyRows(kept)).toBe(1);
  });

  it('ignores the key on other methods', async () => {
    const project = await newProject(team, 'Other methods');
    const created = (await client.post(issuesPath(project), { title: 'Patched twice' })).body;
    const key = randomUUID();
    const first = await client.patch(`${issuesPath(project)}/${created.id}`, { priority: 'low' }, withKey(key));
    const second = await client.patch(`${issuesPath(project)}/${created.id}`, { priority: 'high' }, withKey(key));
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.priority).toBe('high');
    expect(await keyRows(key)).toBe(0);
  });
});
