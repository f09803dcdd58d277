// A webhook's settings besides url and events (description, scope, rate limit, operational events,
// ed25519 signing), what Worklane records on it (auto-disable), and how the delivery service sees
// them through WebhookDirectory.
import { createPublicKey } from 'node:crypto';
import { grpc } from '@worklane/grpc';
import { SecretBox, ed25519PublicKey } from '@worklane/webhooks';
import { resealSecrets } from '../src/data/webhooks';
import { openSecret, sealSecret, type SealedKind } from '../src/domain/secrets';
import { startDirectWebhookService, type Directory, type DirectWebhookService } from './support/direct';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const PUBLIC_URL = 'https://8.8.8.8/endpoint-settings';
const SECRET = 'endpoint-settings-secret-0123';
const MAX_RATE = 50;

let service: DirectWebhookService;
let directory: Directory;
beforeAll(async () => {
  service = await startDirectWebhookService({ limits: { WEBHOOK_RATE_LIMIT_MAX_PER_SECOND: MAX_RATE } });
  directory = service.directory();
});
afterAll(async () => {
  await service?.stop();
});

const path = (teamId: number, webhookId?: number) => `/api/v1/teams/${teamId}/webhooks${webhookId === undefined ? '' : `/${webhookId}`}`;

async function newWebhook(teamId: number, body: Record<string, unknown> = {}) {
  const response = await service.as(teamId).post(path(teamId), { url: PUBLIC_URL, events: ['issue.created'], ...body });
  expect(response.status).toBe(201);
  return response.body;
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => grpc.status.OK,
    (error: grpc.ServiceError) => error.code,
  );

describe('the new fields', () => {
  it('default to no description, every organization and project, no rate limit, no operational events, no ed25519 key', async () => {
    const webhook = await newWebhook(1);
    expect(webhook).toMatchObject({
      description: null,
      filters: { organization_ids: [], project_ids: [] },
      rate_limit_per_second: null,
      operational_events: [],
      disabled_reason: null,
      disabled_at: null,
      ed25519_public_key: null,
      secret_rotated_at: null,
    });
  });

  it('are taken on create, read back by GET, and given to the delivery service', async () => {
    const created = await newWebhook(2, {
      description: '  Support desk sync  ',
      filters: { organization_ids: [7, 3, 7], project_ids: [12] },
      rate_limit_per_second: 10,
      operational_events: ['webhook.disabled', 'webhook.failing'],
    });
    expect(created).toMatchObject({
      description: 'Support desk sync',
      filters: { organization_ids: [3, 7], project_ids: [12] },
      rate_limit_per_second: 10,
      operational_events: ['webhook.disabled', 'webhook.failing'],
    });
    const read = await service.as(2).get(path(2, created.id));
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created);
    const subscription = await directory.getWebhook({ team_id: 2, webhook_id: created.id });
    expect(subscription).toMatchObject({ organization_ids: [3, 7], project_ids: [12], rate_limit_per_second: 10, operational_events: ['webhook.disabled', 'webhook.failing'] });
  });

  it('are validated field by field, the rate limit against the configured highest value', async () => {
    const response = await service.as(3).post(path(3), {
      url: PUBLIC_URL,
      events: ['issue.created', 'webhook.failing'],
      description: 'd'.repeat(1025),
      filters: { organization_ids: Array.from({ length: 101 }, (_, index) => index + 1), project_ids: [0, 'x'] },
      rate_limit_per_second: 0,
      operational_events: ['webhook.failing', 'webhook.failing'],
      ed25519_signing: 'yes',
    });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors).sort()).toEqual([
      'description',
      'ed25519_signing',
      'events.1',
      'filters.organization_ids',
      'filters.project_ids.0',
      'filters.project_ids.1',
      'operational_events.1',
      'rate_limit_per_second',
    ]);
    const tooFast = await service.as(3).post(path(3), { url: PUBLIC_URL, events: ['issue.created'], rate_limit_per_second: MAX_RATE + 1 });
    expect(tooFast.status).toBe(422);
    expect(tooFast.body.errors).toEqual({ rate_limit_per_second: [`The rate_limit_per_second field must not be greater than ${MAX_RATE}.`] });
    expect((await service.as(3).get(path(3))).body.data).toEqual([]);
  });

  it('change by PATCH one at a time; filters are replaced whole; null clears', async () => {
    const webhook = await newWebhook(4, { description: 'first', filters: { organization_ids: [1], project_ids: [2] }, rate_limit_per_second: 5 });
    const patch = (body: Record<string, unknown>) => service.as(4).patch(path(4, webhook.id), body);

    const scoped = await patch({ filters: { project_ids: [9, 8] } });
    expect(scoped.status).toBe(200);
    expect(scoped.body).toMatchObject({ description: 'first', filters: { organization_ids: [], project_ids: [8, 9] }, rate_limit_per_second: 5 });
    expect(scoped.body.updated_at > webhook.updated_at).toBe(true);

    const cleared = await patch({ description: '', filters: null, rate_limit_per_second: null, operational_events: ['webhook.failing'] });
    expect(cleared.body).toMatchObject({
      description: null,
      filters: { organization_ids: [], project_ids: [] },
      rate_limit_per_second: null,
      operational_events: ['webhook.failing'],
    });

    const same = await patch({ description: null, operational_events: ['webhook.failing'], rate_limit_per_second: null });
    expect(same.body.updated_at).toBe(cleared.body.updated_at);

    const refused = await patch({ rate_limit_per_second: MAX_RATE + 1, description: 'never saved' });
    expect(refused.status).toBe(422);
    expect((await service.as(4).get(path(4, webhook.id))).body.description).toBeNull();
  });

  it('a changed URL goes through the same address checks as a new one', async () => {
    const webhook = await newWebhook(5);
    const privateUrl = await service.as(5).patch(path(5, webhook.id), { url: 'https://10.1.2.3/hook' });
    expect(privateUrl.status).toBe(422);
    expect(privateUrl.body.errors.url[0]).toMatch(/public address/);
    const moved = await service.as(5).patch(path(5, webhook.id), { url: 'https://1.1.1.1/moved' });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe('https://1.1.1.1/moved');
  });

  it("are another team's business: 403 on its path, 404 for its webhook under one's own", async () => {
    const webhook = await newWebhook(6);
    expect((await service.as(7).get(path(6, webhook.id))).status).toBe(403);
    expect((await service.as(7).patch(path(7, webhook.id), { description: 'mine now' })).status).toBe(404);
    expect((await service.as(7).get(path(7, webhook.id))).status).toBe(404);
  });
});

describe('ed25519 signing', () => {
  it('makes a key pair: the public key is readable, the private key only the delivery service gets', async () => {
    const webhook = await newWebhook(10, { ed25519_signing: true });
    expect(webhook.ed25519_public_key).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    const subscription = await directory.getWebhook({ team_id: 10, webhook_id: webhook.id });
    expect(ed25519PublicKey(subscription.ed25519_private_key)).toBe(webhook.ed25519_public_key);
    // The raw public key is a valid ed25519 key.
    const raw = Buffer.from(webhook.ed25519_public_key.slice(5), 'base64');
    expect(createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' }).asymmetricKeyType).toBe('ed25519');

    const { rows } = await service.pool.query('SELECT * FROM webhooks WHERE id = $1', [webhook.id]);
    expect(JSON.stringify(rows[0])).not.toContain(subscription.ed25519_private_key);
    // Sealed for its own kind: it does not open as a signing secret.
    expect(() => openSecret(new SecretBox({ current: service.secretKey }), rows[0].ed25519_key_sealed, 10)).toThrow();
  });

  it('keeps its key when asked again, drops it when turned off, and makes a new one when turned on again', async () => {
    const webhook = await newWebhook(11, { ed25519_signing: true });
    const patch = (body: Record<string, unknown>) => service.as(11).patch(path(11, webhook.id), body);
    expect((await patch({ ed25519_signing: true })).body.ed25519_public_key).toBe(webhook.ed25519_public_key);
    const off = await patch({ ed25519_signing: false });
    expect(off.body.ed25519_public_key).toBeNull();
    expect((await directory.getWebhook({ team_id: 11, webhook_id: webhook.id })).ed25519_private_key).toBe('');
    const on = await patch({ ed25519_signing: true });
    expect(on.body.ed25519_public_key).toMatch(/^whpk_/);
    expect(on.body.ed25519_public_key).not.toBe(webhook.ed25519_public_key);
  });
});

describe('DisableWebhook', () => {
  it('switches an active webhook off with its reason and time, and activating it again clears both', async () => {
    const webhook = await newWebhook(20);
    const { webhook: disabled } = await directory.disableWebhook({ team_id: 20, webhook_id: webhook.id, reason: 'failing_since:2026-01-10T08:00:00Z' });
    expect(disabled).toMatchObject({ id: webhook.id, active: false });

    const read = (await service.as(20).get(path(20, webhook.id))).body;
    expect(read).toMatchObject({ active: false, disabled_reason: 'failing_since:2026-01-10T08:00:00Z' });
    expect(read.disabled_at).toMatch(TIMESTAMP);

    // Repeated: nothing changes, the first reason and time stay.
    await directory.disableWebhook({ team_id: 20, webhook_id: webhook.id, reason: 'another reason' });
    const again = (await service.as(20).get(path(20, webhook.id))).body;
    expect(again).toEqual(read);

    const activated = await service.as(20).patch(path(20, webhook.id), { active: true });
    expect(activated.body).toMatchObject({ active: true, disabled_reason: null, disabled_at: null });
  });

  it('leaves a webhook its team deactivated as it is, without a reason', async () => {
    const webhook = await newWebhook(21, { active: false });
    await directory.disableWebhook({ team_id: 21, webhook_id: webhook.id, reason: 'failing' });
    expect((await service.as(21).get(path(21, webhook.id))).body).toMatchObject({ active: false, disabled_reason: null, disabled_at: null });
  });

  it('answers NOT_FOUND outside the team and INVALID_ARGUMENT without a reason', async () => {
    const webhook = await newWebhook(22);
    expect(await codeOf(directory.disableWebhook({ team_id: 23, webhook_id: webhook.id, reason: 'failing' }))).toBe(grpc.status.NOT_FOUND);
    expect(await codeOf(directory.disableWebhook({ team_id: 22, webhook_id: webhook.id, reason: '  ' }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await codeOf(directory.disableWebhook({ team_id: 22, webhook_id: webhook.id, reason: 'r'.repeat(501) }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await service.as(22).get(path(22, webhook.id))).body.active).toBe(true);
  });
});

describe('ListSubscriptions of operational events', () => {
  it('lists the active webhooks of the team that opted in to the event, and issue events ignore the opt-in', async () => {
    const teamId = 30;
    const both = await newWebhook(teamId, { operational_events: ['webhook.failing', 'webhook.disabled'], secret: SECRET });
    const disabledOnly = await newWebhook(teamId, { operational_events: ['webhook.disabled'] });
    await newWebhook(teamId);
    await newWebhook(teamId, { operational_events: ['webhook.failing'], active: false });
    await newWebhook(teamId + 1, { operational_events: ['webhook.failing'] });

    const failing = await directory.listSubscriptions({ team_id: teamId, event: 'webhook.failing' });
    expect(failing.subscriptions.map((subscription) => subscription.id)).toEqual([both.id]);
    expect(failing.subscriptions[0]!.secret).toBe(SECRET);
    const disabled = await directory.listSubscriptions({ team_id: teamId, event: 'webhook.disabled' });
    expect(disabled.subscriptions.map((subscription) => subscription.id)).toEqual([both.id, disabledOnly.id]);
    const issues = await directory.listSubscriptions({ team_id: teamId, event: 'issue.created' });
    expect(issues.subscriptions).toHaveLength(3);
    expect(await codeOf(directory.listSubscriptions({ team_id: teamId, event: 'webhook.deleted' }))).toBe(grpc.status.INVALID_ARGUMENT);
  });
});

describe('encryption key rotation', () => {
  it('re-encrypts old secrets of a rotation and ed25519 keys too', async () => {
    const webhook = await newWebhook(40, { secret: SECRET, ed25519_signing: true });
    const rotated = await service.as(40).post(`${path(40, webhook.id)}/secret/rotate`, { overlap_seconds: 3600 });
    expect(rotated.status).toBe(200);
    const before = await directory.getWebhook({ team_id: 40, webhook_id: webhook.id });

    const newKey = 'k'.repeat(64);
    const box = new SecretBox({ current: newKey, previous: [service.secretKey] });
    const reseal = (sealed: string, teamId: number, kind: SealedKind) => sealSecret(box, openSecret(box, sealed, teamId, kind), teamId, kind);
    const outcome = await resealSecrets(service.pool, box.previousKeyIds, reseal, 1);
    expect(outcome.failed).toEqual([]);

    const onlyNewKey = new SecretBox({ current: newKey });
    const { rows } = await service.pool.query('SELECT secret_sealed, ed25519_key_sealed FROM webhooks WHERE id = $1', [webhook.id]);
    const previous = await service.pool.query('SELECT secret_sealed FROM webhook_previous_secrets WHERE webhook_id = $1', [webhook.id]);
    expect(openSecret(onlyNewKey, rows[0].secret_sealed, 40)).toBe(before.secret);
    expect(openSecret(onlyNewKey, rows[0].ed25519_key_sealed, 40, 'ed25519')).toBe(before.ed25519_private_key);
    expect(previous.rows.map((row) => openSecret(onlyNewKey, row.secret_sealed, 40))).toEqual([SECRET]);
    expect(await resealSecrets(service.pool, box.previousKeyIds, reseal)).toEqual({ resealed: 0, failed: [] });
  });
});
