// The webhook service called directly, with identities signed as the gateway signs them, and its
// WebhookDirectory over gRPC as the delivery service calls it.
import request from 'supertest';
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { signIdentity } from '@worklane/http';
import { loadProto, type WebhookProto } from '@worklane/proto';
import { signerOf, signingKeyPairs } from '@worklane/testing';
import { SecretBox } from '@worklane/webhooks';
import { resealSecrets } from '../src/data/webhooks';
import { openSecret, sealSecret } from '../src/domain/secrets';
import { startDirectWebhookService, type Directory, type DirectWebhookService } from './support/direct';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const WEBHOOK_FIELDS = [
  'active',
  'created_at',
  'description',
  'disabled_at',
  'disabled_reason',
  'ed25519_public_key',
  'events',
  'filters',
  'id',
  'operational_events',
  'rate_limit_per_second',
  'secret_rotated_at',
  'team_id',
  'updated_at',
  'url',
];
const TEAM = 1;
const OTHER_TEAM = 2;
const SECRET = 'whsec_kept-secret-0123456789';
// A public address literal: accepted without DNS, so the suite needs no network.
const PUBLIC_URL = 'https://8.8.8.8/worklane-hooks';

let service: DirectWebhookService;
let directory: Directory;
beforeAll(async () => {
  service = await startDirectWebhookService();
  directory = service.directory();
});
afterAll(async () => {
  await service?.stop();
});

const webhooksPath = (teamId = TEAM) => `/api/v1/teams/${teamId}/webhooks`;
const team = () => service.as(TEAM);

async function newWebhook(body: Record<string, unknown> = {}, teamId = TEAM) {
  const response = await service.as(teamId).post(webhooksPath(teamId), { url: PUBLIC_URL, events: ['issue.created'], ...body });
  expect(response.status).toBe(201);
  return response.body;
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => grpc.status.OK,
    (error: grpc.ServiceError) => error.code,
  );

describe('create', () => {
  it('returns the bare webhook with exactly its fields, active by default, and no secret', async () => {
    const response = await team().post(webhooksPath(), {
      url: PUBLIC_URL,
      events: ['issue.created', 'issue.updated'],
      secret: SECRET,
      id: 77,
      team_id: OTHER_TEAM,
      created_at: '2000-01-01T00:00:00.000000Z',
      extra: true,
    });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(WEBHOOK_FIELDS);
    expect(response.body).toMatchObject({ team_id: TEAM, url: PUBLIC_URL, events: ['issue.created', 'issue.updated'], active: true });
    expect(response.body.id).not.toBe(77);
    expect(response.body.created_at).toMatch(TIMESTAMP);
    expect(response.body.updated_at).toBe(response.body.created_at);
    expect(response.text).not.toContain(SECRET);
    expect(response.headers.location).toBe(`${webhooksPath()}/${response.body.id}`);
  });

  it('keeps active false when sent', async () => {
    expect((await newWebhook({ active: false })).active).toBe(false);
  });

  it('stores the secret encrypted, and gives it back only to the delivery service', async () => {
    const webhook = await newWebhook({ secret: SECRET });
    const { rows } = await service.pool.query('SELECT * FROM webhooks WHERE id = $1', [webhook.id]);
    const stored = JSON.stringify(rows[0]);
    expect(stored).not.toContain(SECRET);
    expect(rows[0].secret_sealed).toMatch(/^wsb1\.[0-9a-f]{12}\./);
    expect((await directory.getWebhook({ team_id: TEAM, webhook_id: webhook.id })).secret).toBe(SECRET);
  });

  it('answers 422 with per-field errors', async () => {
    const response = await team().post(webhooksPath(), { url: 'http://8.8.8.8/', events: ['issue.closed'], secret: 'short', active: 'yes' });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      message: 'The url field must be an absolute https:// URL.',
      code: 'validation_failed',
      errors: {
        url: ['The url field must be an absolute https:// URL.'],
        'events.0': ['The selected events is invalid.'],
        secret: ['The secret field must be at least 16 characters.'],
        active: ['The active field must be true or false.'],
      },
    });
  });

  it.each([
    ['http://8.8.8.8/hook', 'The url field must be an absolute https:// URL.'],
    ['https://user:password@8.8.8.8/hook', 'The url field must not contain credentials.'],
    ['not a url', 'The url field must be an absolute https:// URL.'],
    [`https://8.8.8.8/${'p'.repeat(2048)}`, 'The url field must not be greater than 2048 characters.'],
  ])('refuses the url %j', async (url, message) => {
    const response = await team().post(webhooksPath(), { url, events: ['issue.created'] });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ url: [message] });
  });

  it.each([
    'https://localhost/hook',
    'https://api.localhost/hook',
    'https://127.0.0.1/hook',
    'https://127.1/hook',
    'https://2130706433/hook',
    'https://10.1.2.3/hook',
    'https://192.168.0.10/hook',
    'https://172.20.0.1/hook',
    'https://100.64.0.1/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://0.0.0.0/hook',
    'https://224.0.0.1/hook',
    'https://255.255.255.255/hook',
    'https://192.0.2.1/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a9fe:a9fe]/hook',
    'https://[64:ff9b::a00:1]/hook',
    'https://[2002:7f00:1::]/hook',
  ])('refuses %s, which is not a public address', async (url) => {
    const response = await team().post(webhooksPath(), { url, events: ['issue.created'] });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toEqual(['url']);
    expect(response.body.errors.url[0]).toMatch(/public address/);
  });

  it('refuses a host that does not resolve', async () => {
    const response = await team().post(webhooksPath(), { url: 'https://no-such-host.invalid/hook', events: ['issue.created'] });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ url: ['The url field host could not be resolved.'] });
  });

  it('counts refused urls by reason', async () => {
    const metric = await service.metrics.registry.getSingleMetricAsString('worklane_webhook_url_rejections_total');
    expect(metric).toMatch(/reason="non_public",service="webhook"} [1-9]/);
    expect(metric).toMatch(/reason="unresolvable",service="webhook"} [1-9]/);
  });

  it('creates nothing when refusing', async () => {
    const before = (await team().get(webhooksPath())).body.data.length;
    await team().post(webhooksPath(), { url: 'https://127.0.0.1/', events: ['issue.created'] });
    await team().post(webhooksPath(), { url: PUBLIC_URL, events: [] });
    expect((await team().get(webhooksPath())).body.data).toHaveLength(before);
  });
});

describe('WEBHOOK_ALLOWED_CIDRS', () => {
  it('lets an allowed range through and nothing else', async () => {
    const allowing = await startDirectWebhookService({ allowedCidrs: ['127.0.0.0/8', 'fd00::/8'] });
    try {
      const caller = allowing.as(TEAM);
      for (const url of ['https://127.0.0.1:8443/hook', 'https://localhost:8443/hook', 'https://[::ffff:127.0.0.1]/hook', 'https://[fd00::5]/hook']) {
        expect((await caller.post(webhooksPath(), { url, events: ['issue.created'] })).status).toBe(201);
      }
      for (const url of ['https://10.0.0.1/hook', 'https://169.254.169.254/', 'https://[::1]/hook']) {
        expect((await caller.post(webhooksPath(), { url, events: ['issue.created'] })).status).toBe(422);
      }
    } finally {
      await allowing.stop();
    }
  });
});

describe('list, read, update, delete', () => {
  it("lists the team's webhooks newest first under data", async () => {
    const theirs = await newWebhook({}, OTHER_TEAM);
    const older = await newWebhook();
    const newer = await newWebhook();
    const response = await team().get(webhooksPath());
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    const ids = response.body.data.map((webhook: { id: number }) => webhook.id);
    expect(ids.indexOf(newer.id)).toBeLessThan(ids.indexOf(older.id));
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    expect(ids).not.toContain(theirs.id);
    for (const webhook of response.body.data) expect(Object.keys(webhook).sort()).toEqual(WEBHOOK_FIELDS);
    expect(response.body.data[ids.indexOf(newer.id)]).toEqual(newer);
  });

  it('reads one webhook', async () => {
    const webhook = await newWebhook({ secret: SECRET });
    const response = await team().get(`${webhooksPath()}/${webhook.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(webhook);
    expect(response.text).not.toContain(SECRET);
  });

  it('updates url, events and active, leaving the rest', async () => {
    const webhook = await newWebhook({ secret: SECRET });
    const path = `${webhooksPath()}/${webhook.id}`;
    const response = await team().patch(path, { url: 'https://1.1.1.1/new', events: ['issue.updated'], active: false, team_id: OTHER_TEAM });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: webhook.id, team_id: TEAM, url: 'https://1.1.1.1/new', events: ['issue.updated'], active: false });
    expect(response.body.updated_at > webhook.updated_at).toBe(true);
    expect(response.body.created_at).toBe(webhook.created_at);
    expect((await directory.getWebhook({ team_id: TEAM, webhook_id: webhook.id })).secret).toBe(SECRET);
  });

  it('replaces the secret, and removes it with null', async () => {
    const webhook = await newWebhook({ secret: SECRET });
    const path = `${webhooksPath()}/${webhook.id}`;
    const replaced = await team().patch(path, { secret: 'another-secret-value-42' });
    expect(replaced.status).toBe(200);
    expect(replaced.text).not.toContain('another-secret-value-42');
    expect((await directory.getWebhook({ team_id: TEAM, webhook_id: webhook.id })).secret).toBe('another-secret-value-42');
    expect((await team().patch(path, { secret: null })).status).toBe(200);
    expect((await directory.getWebhook({ team_id: TEAM, webhook_id: webhook.id })).secret).toBe('');
    const { rows } = await service.pool.query('SELECT secret_sealed FROM webhooks WHERE id = $1', [webhook.id]);
    expect(rows[0].secret_sealed).toBeNull();
  });

  it('leaves updated_at alone when nothing changes', async () => {
    const webhook = await newWebhook();
    const response = await team().patch(`${webhooksPath()}/${webhook.id}`, { url: webhook.url, events: webhook.events, active: true, id: 5 });
    expect(response.body).toEqual(webhook);
  });

  it('validates a PATCH like a create, changing nothing on failure', async () => {
    const webhook = await newWebhook();
    const path = `${webhooksPath()}/${webhook.id}`;
    for (const [body, field] of [
      [{ url: 'https://127.0.0.1/' }, 'url'],
      [{ url: 'http://8.8.8.8/' }, 'url'],
      [{ url: null }, 'url'],
      [{ events: [] }, 'events'],
      [{ events: ['issue.created', 'issue.created'] }, 'events.1'],
      [{ secret: 'x' }, 'secret'],
      [{ active: 1 }, 'active'],
    ] as const) {
      const response = await team().patch(path, body);
      expect(response.status).toBe(422);
      expect(Object.keys(response.body.errors)).toEqual([field]);
    }
    expect((await team().get(path)).body).toEqual(webhook);
  });

  it('deletes for good: 204 with no body, then 404 everywhere, and the delivery service sees it gone', async () => {
    const webhook = await newWebhook({ events: ['issue.created', 'issue.updated'] });
    const path = `${webhooksPath()}/${webhook.id}`;
    const response = await team().delete(path);
    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    expect(response.headers['content-type']).toBeUndefined();
    expect((await team().get(path)).status).toBe(404);
    expect((await team().patch(path, { active: true })).status).toBe(404);
    expect((await team().delete(path)).status).toBe(404);
    expect(await codeOf(directory.getWebhook({ team_id: TEAM, webhook_id: webhook.id }))).toBe(grpc.status.NOT_FOUND);
    const subscriptions = await directory.listSubscriptions({ team_id: TEAM, event: 'issue.created' });
    expect(subscriptions.subscriptions.map((subscription) => subscription.id)).not.toContain(webhook.id);
  });
});

describe('scoping', () => {
  let mine: { id: number };
  let theirs: { id: number; url: string };
  beforeAll(async () => {
    mine = await newWebhook();
    theirs = await newWebhook({ secret: SECRET }, OTHER_TEAM);
  });

  it("answers 403 for another team's path on every route and verb", async () => {
    const responses = [
      await team().get(webhooksPath(OTHER_TEAM)),
      await team().post(webhooksPath(OTHER_TEAM), { url: PUBLIC_URL, events: ['issue.created'] }),
      await team().get(`${webhooksPath(OTHER_TEAM)}/${theirs.id}`),
      await team().patch(`${webhooksPath(OTHER_TEAM)}/${theirs.id}`, { active: false }),
      await team().delete(`${webhooksPath(OTHER_TEAM)}/${theirs.id}`),
    ];
    for (const response of responses) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ message: 'This action is unauthorized.', code: 'forbidden' });
    }
  });

  it("answers 404 for another team's webhook under one's own path", async () => {
    const path = `${webhooksPath()}/${theirs.id}`;
    for (const response of [await team().get(path), await team().patch(path, { url: 'https://1.1.1.1/stolen', active: false }), await team().delete(path)]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'Not found.', code: 'not_found' });
    }
  });

  it("leaves the other team's webhook untouched", async () => {
    const current = await service.as(OTHER_TEAM).get(`${webhooksPath(OTHER_TEAM)}/${theirs.id}`);
    expect(current.body).toEqual(theirs);
    expect((await directory.getWebhook({ team_id: OTHER_TEAM, webhook_id: theirs.id })).secret).toBe(SECRET);
  });

  it('hides a webhook from the directory under another team', async () => {
    expect(await codeOf(directory.getWebhook({ team_id: TEAM, webhook_id: theirs.id }))).toBe(grpc.status.NOT_FOUND);
  });

  it('answers 404 for malformed ids, 405 for methods a path does not have', async () => {
    for (const path of [`${webhooksPath()}/abc`, `${webhooksPath()}/0`, `${webhooksPath()}/-4`, '/api/v1/teams/x/webhooks']) {
      expect((await team().get(path)).status).toBe(404);
    }
    const put = await team().send('PUT', `${webhooksPath()}/${mine.id}`);
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, PATCH, DELETE, HEAD');
    expect((await team().delete(webhooksPath())).headers.allow).toBe('GET, POST, HEAD');
  });

  it('refuses requests without a valid signed identity', async () => {
    const path = webhooksPath();
    expect((await request(service.app.http).get(path)).status).toBe(401);
    const forged = signIdentity(signerOf(signingKeyPairs(), 'gateway'), 'GET', path, { teamId: TEAM, userId: 1, tokenId: 1 });
    expect((await request(service.app.http).get(path).set(forged)).status).toBe(401);
    // The delivery service's own key mints no identity, under its name or the gateway's.
    const delivery = signerOf(service.keys, 'delivery');
    for (const signer of [delivery, { name: 'gateway', key: delivery.key }]) {
      expect(
        (
          await request(service.app.http)
            .get(path)
            .set(signIdentity(signer, 'GET', path, { teamId: TEAM, userId: 1, tokenId: 1 }))
        ).status,
      ).toBe(401);
    }
    expect(
      (
        await request(service.app.http)
          .get(path)
          .set(signIdentity(service.identityKey, 'GET', path, { teamId: TEAM, userId: 1, tokenId: 1 }))
      ).status,
    ).toBe(200);
  });
});

describe('WebhookDirectory', () => {
  it('answers only the delivery service: other principals are refused, and no key passes for another', async () => {
    const { WebhookDirectory } = loadProto<WebhookProto>('webhook').worklane.webhook.v1;
    const as = (caller: string, keyOf: 'gateway' | 'console' | 'issue' | 'delivery' | 'cli') =>
      createGrpcClient(WebhookDirectory, service.grpcAddress, { caller, signingKey: signerOf(service.keys, keyOf).key });
    const gateway = as('gateway', 'gateway');
    const issueAsDelivery = as('delivery', 'issue');
    try {
      const list = (client: typeof gateway) => unaryCall((metadata, options, done) => client.ListSubscriptions({ team_id: 1, event: 'issue.created' }, metadata, options, done));
      expect(await codeOf(list(gateway))).toBe(grpc.status.PERMISSION_DENIED);
      expect(await codeOf(list(issueAsDelivery))).toBe(grpc.status.UNAUTHENTICATED);
      expect(await codeOf(service.directory().listSubscriptions({ team_id: 1, event: 'issue.created' }))).toBe(grpc.status.OK);
    } finally {
      gateway.close();
      issueAsDelivery.close();
    }
  });

  it('lists the active webhooks of the team subscribed to the event, with secrets', async () => {
    const teamId = 31;
    const both = await newWebhook({ events: ['issue.created', 'issue.updated'], secret: SECRET }, teamId);
    const createdOnly = await newWebhook({ events: ['issue.created'] }, teamId);
    const updatedOnly = await newWebhook({ events: ['issue.updated'] }, teamId);
    await newWebhook({ events: ['issue.created'], active: false }, teamId);
    await newWebhook({ events: ['issue.created'] }, teamId + 1);

    const created = await directory.listSubscriptions({ team_id: teamId, event: 'issue.created' });
    const unset = { previous_secrets: [], ed25519_private_key: '', organization_ids: [], project_ids: [], rate_limit_per_second: 0, operational_events: [] };
    expect(created.subscriptions).toEqual([
      { id: both.id, team_id: teamId, url: PUBLIC_URL, events: ['issue.created', 'issue.updated'], active: true, secret: SECRET, ...unset },
      { id: createdOnly.id, team_id: teamId, url: PUBLIC_URL, events: ['issue.created'], active: true, secret: '', ...unset },
    ]);
    const updated = await directory.listSubscriptions({ team_id: teamId, event: 'issue.updated' });
    expect(updated.subscriptions.map((subscription) => subscription.id)).toEqual([both.id, updatedOnly.id]);
  });

  it('reports a deactivated webhook as inactive', async () => {
    const webhook = await newWebhook({ active: false }, 32);
    expect((await directory.getWebhook({ team_id: 32, webhook_id: webhook.id })).active).toBe(false);
  });

  it('refuses malformed requests and unsigned callers', async () => {
    expect(await codeOf(directory.listSubscriptions({ team_id: 1, event: 'issue.deleted' }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await codeOf(directory.listSubscriptions({ team_id: 0, event: 'issue.created' }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await codeOf(directory.getWebhook({ team_id: 1, webhook_id: 0 }))).toBe(grpc.status.INVALID_ARGUMENT);

    const { WebhookDirectory } = loadProto<WebhookProto>('webhook').worklane.webhook.v1;
    const unsigned = new WebhookDirectory(service.grpcAddress, grpc.credentials.createInsecure());
    try {
      const code = await new Promise<grpc.status>((resolve) =>
        unsigned.ListSubscriptions({ team_id: 1, event: 'issue.created' }, (error) => resolve(error ? error.code : grpc.status.OK)),
      );
      expect(code).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      unsigned.close();
    }
  });
});

describe('secret key rotation', () => {
  it('re-encrypts secrets under the new key, which then opens them without the old one', async () => {
    const webhook = await newWebhook({ secret: SECRET }, 51);
    const rotated = new SecretBox({ current: 'n'.repeat(64), previous: [service.secretKey] });
    const reseal = (sealed: string, teamId: number) => sealSecret(rotated, openSecret(rotated, sealed, teamId), teamId);
    const outcome = await resealSecrets(service.pool, rotated.previousKeyIds, reseal, 2);
    expect(outcome.resealed).toBeGreaterThanOrEqual(1);
    expect(outcome.failed).toEqual([]);

    const { rows } = await service.pool.query('SELECT secret_sealed FROM webhooks WHERE id = $1', [webhook.id]);
    const onlyNewKey = new SecretBox({ current: 'n'.repeat(64) });
    expect(rows[0].secret_sealed.split('.')[1]).toBe(onlyNewKey.currentKeyId);
    expect(openSecret(onlyNewKey, rows[0].secret_sealed, 51)).toBe(SECRET);
    // A sealed secret opens only for its own team.
    expect(() => openSecret(onlyNewKey, rows[0].secret_sealed, 52)).toThrow();
    // Nothing is left under the old key: a second pass finds nothing.
    expect(await resealSecrets(service.pool, rotated.previousKeyIds, reseal)).toEqual({ resealed: 0, failed: [] });
  });

  it('leaves a secret it cannot open as it is, and still finishes', async () => {
    const oldKey = 'o'.repeat(64);
    const old = new SecretBox({ current: oldKey });
    const broken = await newWebhook({}, 53);
    // Sealed for another team: it cannot be opened for this one.
    await service.pool.query('UPDATE webhooks SET secret_sealed = $2 WHERE id = $1', [broken.id, sealSecret(old, SECRET, 54)]);
    const rotated = new SecretBox({ current: 'm'.repeat(64), previous: [oldKey] });
    const reseal = (sealed: string, teamId: number) => {
      try {
        return sealSecret(rotated, openSecret(rotated, sealed, teamId), teamId);
      } catch {
        return undefined;
      }
    };
    expect(await resealSecrets(service.pool, rotated.previousKeyIds, reseal, 1)).toEqual({ resealed: 0, failed: [broken.id] });
  });
});
