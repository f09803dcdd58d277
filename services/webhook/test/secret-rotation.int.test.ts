// POST .../webhooks/{webhook}/secret/rotate: the new secret shown once, the old one kept (sealed)
// for the overlap and given to the delivery service with its expiry, and the bounds of both.
import { startDirectWebhookService, type Directory, type DirectWebhookService } from './support/direct';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const PUBLIC_URL = 'https://8.8.8.8/rotation';
const FIRST_SECRET = 'the-first-signing-secret';
const MAX_PREVIOUS = 2;
const MAX_OVERLAP = 7_200;

let service: DirectWebhookService;
let directory: Directory;
beforeAll(async () => {
  service = await startDirectWebhookService({
    limits: { WEBHOOK_PREVIOUS_SECRETS_MAX: MAX_PREVIOUS, WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS: 3_600, WEBHOOK_SECRET_OVERLAP_MAX_SECONDS: MAX_OVERLAP },
  });
  directory = service.directory();
});
afterAll(async () => {
  await service?.stop();
});

const webhookPath = (teamId: number, webhookId: number) => `/api/v1/teams/${teamId}/webhooks/${webhookId}`;
const rotate = (teamId: number, webhookId: number, body: Record<string, unknown> = {}) => service.as(teamId).post(`${webhookPath(teamId, webhookId)}/secret/rotate`, body);

async function newWebhook(teamId: number, body: Record<string, unknown> = { secret: FIRST_SECRET }) {
  const response = await service.as(teamId).post(`/api/v1/teams/${teamId}/webhooks`, { url: PUBLIC_URL, events: ['issue.created'], ...body });
  expect(response.status).toBe(201);
  return response.body;
}

const subscriptionOf = (teamId: number, webhookId: number) => directory.getWebhook({ team_id: teamId, webhook_id: webhookId });

describe('rotating a secret', () => {
  it('answers the webhook with a generated secret, shown once, and the old one keeps signing for the default overlap', async () => {
    const webhook = await newWebhook(1);
    const response = await rotate(1, webhook.id);
    expect(response.status).toBe(200);
    expect(response.headers['cache-control']).toBe('no-store');
    const { secret, ...rotated } = response.body;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated).toEqual({ ...webhook, updated_at: rotated.updated_at, secret_rotated_at: rotated.secret_rotated_at });
    expect(rotated.secret_rotated_at).toMatch(TIMESTAMP);

    const subscription = await subscriptionOf(1, webhook.id);
    expect(subscription.secret).toBe(secret);
    expect(subscription.previous_secrets).toEqual([{ secret: FIRST_SECRET, expires_at_ms: expect.any(Number) }]);
    // The overlap is counted from the rotation by the database clock: 3,600 s after secret_rotated_at.
    const rotatedAtMs = Date.parse(rotated.secret_rotated_at);
    expect(Math.abs(subscription.previous_secrets[0]!.expires_at_ms - (rotatedAtMs + 3_600_000))).toBeLessThan(1_000);

    // Nothing but the answer ever shows it: not GET, not the stored row.
    const read = await service.as(1).get(webhookPath(1, webhook.id));
    expect(read.text).not.toContain(secret);
    const stored = await service.pool.query('SELECT w.*, p.* FROM webhooks w JOIN webhook_previous_secrets p ON p.webhook_id = w.id WHERE w.id = $1', [webhook.id]);
    expect(JSON.stringify(stored.rows)).not.toContain(secret);
    expect(JSON.stringify(stored.rows)).not.toContain(FIRST_SECRET);
  });

  it('takes the secret and the overlap it is given; each rotation lists its old secrets newest first', async () => {
    const webhook = await newWebhook(2);
    expect((await rotate(2, webhook.id, { secret: 'the-second-signing-secret', overlap_seconds: 600 })).body.secret).toBe('the-second-signing-secret');
    expect((await rotate(2, webhook.id, { secret: 'the-third-signing-secret', overlap_seconds: MAX_OVERLAP })).status).toBe(200);
    const subscription = await subscriptionOf(2, webhook.id);
    expect(subscription.secret).toBe('the-third-signing-secret');
    expect(subscription.previous_secrets.map((previous) => previous.secret)).toEqual(['the-second-signing-secret', FIRST_SECRET]);
    const [second, first] = subscription.previous_secrets;
    expect(second!.expires_at_ms - first!.expires_at_ms).toBeGreaterThan((MAX_OVERLAP - 600 - 60) * 1000);
  });

  it('with overlap_seconds 0 replaces the secret at once', async () => {
    const webhook = await newWebhook(3);
    expect((await rotate(3, webhook.id, { overlap_seconds: 0 })).status).toBe(200);
    expect((await subscriptionOf(3, webhook.id)).previous_secrets).toEqual([]);
  });

  it('gives a webhook without a secret its first one, with nothing to keep', async () => {
    const webhook = await newWebhook(4, {});
    const response = await rotate(4, webhook.id);
    expect(response.status).toBe(200);
    const subscription = await subscriptionOf(4, webhook.id);
    expect(subscription.secret).toBe(response.body.secret);
    expect(subscription.previous_secrets).toEqual([]);
  });

  it('stops giving an old secret once its overlap has ended, and the next rotation deletes it', async () => {
    const webhook = await newWebhook(5);
    await rotate(5, webhook.id);
    await service.pool.query(`UPDATE webhook_previous_secrets SET expires_at = now() - interval '1 second' WHERE webhook_id = $1`, [webhook.id]);
    expect((await subscriptionOf(5, webhook.id)).previous_secrets).toEqual([]);
    await rotate(5, webhook.id);
    const { rows } = await service.pool.query('SELECT count(*)::int AS n FROM webhook_previous_secrets WHERE webhook_id = $1', [webhook.id]);
    expect(rows[0].n).toBe(1);
  });
});

describe('the bounds of a rotation', () => {
  it(`refuses one old secret too many (${MAX_PREVIOUS} by this configuration) with 409 secret_rotation_limit, changing nothing`, async () => {
    const webhook = await newWebhook(10);
    expect((await rotate(10, webhook.id)).status).toBe(200);
    const last = await rotate(10, webhook.id);
    expect(last.status).toBe(200);
    const refused = await rotate(10, webhook.id, { secret: 'never-becomes-the-secret' });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      message: `The webhook already has ${MAX_PREVIOUS} old secrets that still sign; wait until one expires or rotate with overlap_seconds 0.`,
      code: 'secret_rotation_limit',
      limit: MAX_PREVIOUS,
    });
    const subscription = await subscriptionOf(10, webhook.id);
    expect(subscription.secret).toBe(last.body.secret);
    expect(subscription.previous_secrets).toHaveLength(MAX_PREVIOUS);

    // Without an overlap nothing is kept, so it is allowed.
    expect((await rotate(10, webhook.id, { overlap_seconds: 0 })).status).toBe(200);
    // Once an old secret expires, there is room again.
    await service.pool.query(
      `UPDATE webhook_previous_secrets SET expires_at = now() - interval '1 second' WHERE id = (SELECT min(id) FROM webhook_previous_secrets WHERE webhook_id = $1)`,
      [webhook.id],
    );
    expect((await rotate(10, webhook.id)).status).toBe(200);
  });

  it('refuses an overlap beyond the configured longest, a secret out of bounds, and the current secret', async () => {
    const webhook = await newWebhook(11);
    const tooLong = await rotate(11, webhook.id, { overlap_seconds: MAX_OVERLAP + 1 });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors).toEqual({ overlap_seconds: [`The overlap_seconds field must not be greater than ${MAX_OVERLAP}.`] });
    const malformed = await rotate(11, webhook.id, { secret: 'short', overlap_seconds: -1 });
    expect(malformed.status).toBe(422);
    expect(Object.keys(malformed.body.errors).sort()).toEqual(['overlap_seconds', 'secret']);
    const same = await rotate(11, webhook.id, { secret: FIRST_SECRET });
    expect(same.status).toBe(422);
    expect(same.body.errors).toEqual({ secret: ['The secret field must differ from the current secret.'] });
    expect((await subscriptionOf(11, webhook.id)).previous_secrets).toEqual([]);
    expect((await service.as(11).get(webhookPath(11, webhook.id))).body.secret_rotated_at).toBeNull();
  });

  it("is the team's own: 403 on another team's path, 404 for another team's webhook or none", async () => {
    const webhook = await newWebhook(12);
    expect((await service.as(13).post(`${webhookPath(12, webhook.id)}/secret/rotate`, {})).status).toBe(403);
    expect((await rotate(13, webhook.id)).status).toBe(404);
    expect((await rotate(12, 999_999_999)).status).toBe(404);
    expect((await subscriptionOf(12, webhook.id)).secret).toBe(FIRST_SECRET);
  });
});

describe('a PATCH of the secret', () => {
  it('replaces it at once and ends the overlap of earlier rotations; null removes every secret', async () => {
    const webhook = await newWebhook(20);
    await rotate(20, webhook.id);
    const patched = await service.as(20).patch(webhookPath(20, webhook.id), { secret: 'patched-in-signing-secret' });
    expect(patched.status).toBe(200);
    expect(patched.body.secret_rotated_at).toMatch(TIMESTAMP);
    expect(await subscriptionOf(20, webhook.id)).toMatchObject({ secret: 'patched-in-signing-secret', previous_secrets: [] });

    await rotate(20, webhook.id);
    await service.as(20).patch(webhookPath(20, webhook.id), { secret: null });
    expect(await subscriptionOf(20, webhook.id)).toMatchObject({ secret: '', previous_secrets: [] });
  });

  it('deleting the webhook deletes its old secrets', async () => {
    const webhook = await newWebhook(21);
    await rotate(21, webhook.id);
    expect((await service.as(21).delete(webhookPath(21, webhook.id))).status).toBe(204);
    const { rows } = await service.pool.query('SELECT count(*)::int AS n FROM webhook_previous_secrets WHERE webhook_id = $1', [webhook.id]);
    expect(rows[0].n).toBe(0);
  });
});
