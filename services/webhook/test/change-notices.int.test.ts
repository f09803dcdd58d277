// Every committed change of a webhook is announced on the WEBHOOK_CHANGES stream before its call is
// answered, naming the team and the webhook and nothing else (docs/webhook-directory-cache.md).
import {
  WEBHOOK_CHANGES_STREAM,
  WEBHOOK_CHANGES_SUBJECT,
  connectNats,
  ensureWebhookChangesStream,
  jetstream,
  jetstreamManager,
  webhookChangesLimitsFrom,
  webhookChangesSettingsSchema,
  type JetStreamManager,
  type NatsConnection,
  type WebhookChange,
} from '@worklane/messaging';
import { createLogger, promClient } from '@worklane/observability';
import { api, bootstrapTeam, startNatsServer, startSystem, type NatsServer } from '@worklane/testing';
import { JetStreamChangeNotifier } from '../src/events/change-notices';
import { startDirectWebhookService, type DirectWebhookService } from './support/direct';

const TEAM = 1;
const PUBLIC_URL = 'https://8.8.8.8/worklane-hooks';
const SECRET = 'whsec_never-in-a-notice-0123456789';
const limits = webhookChangesLimitsFrom({
  WEBHOOK_CHANGES_REPLICAS: webhookChangesSettingsSchema.WEBHOOK_CHANGES_REPLICAS.parse(undefined),
  WEBHOOK_CHANGES_MAX_AGE_SECONDS: webhookChangesSettingsSchema.WEBHOOK_CHANGES_MAX_AGE_SECONDS.parse(undefined),
  WEBHOOK_CHANGES_MAX_MSGS: webhookChangesSettingsSchema.WEBHOOK_CHANGES_MAX_MSGS.parse(undefined),
});

const lastNotice = async (jsm: JetStreamManager): Promise<WebhookChange | undefined> => {
  const message = await jsm.streams.getMessage(WEBHOOK_CHANGES_STREAM, { last_by_subj: WEBHOOK_CHANGES_SUBJECT });
  return message ? (message.json() as WebhookChange) : undefined;
};

describe('notices of every change, in process', () => {
  let service: DirectWebhookService;
  beforeAll(async () => {
    service = await startDirectWebhookService();
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('announces create, update, rotation, auto-disable and delete, and nothing for calls that change nothing', async () => {
    const team = service.as(TEAM);
    const created = await team.post(`/api/v1/teams/${TEAM}/webhooks`, { url: PUBLIC_URL, events: ['issue.created'], secret: SECRET });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const path = `/api/v1/teams/${TEAM}/webhooks/${id}`;
    expect((await team.patch(path, { description: 'moved' })).status).toBe(200);
    expect((await team.post(`${path}/secret/rotate`, {})).status).toBe(200);
    expect((await service.directory().disableWebhook({ team_id: TEAM, webhook_id: id, reason: 'failing for 5 days' })).webhook?.active).toBe(false);
    // Refused or not found: no change, no notice.
    expect((await team.patch(path, { url: 'https://127.0.0.1/private' })).status).toBe(422);
    expect((await team.patch(`/api/v1/teams/${TEAM}/webhooks/${id + 1000}`, { description: 'x' })).status).toBe(404);
    expect((await team.get(path)).status).toBe(200);
    expect((await team.delete(path)).status).toBe(204);
    expect((await team.delete(path)).status).toBe(404);

    expect(service.notices).toEqual([
      { team_id: TEAM, webhook_id: id, change: 'created' },
      { team_id: TEAM, webhook_id: id, change: 'updated' },
      { team_id: TEAM, webhook_id: id, change: 'rotated' },
      { team_id: TEAM, webhook_id: id, change: 'disabled' },
      { team_id: TEAM, webhook_id: id, change: 'deleted' },
    ]);
    expect(JSON.stringify(service.notices)).not.toContain('whsec_');
  });
});

describe('notices on NATS', () => {
  let nats: NatsServer;
  let connection: NatsConnection;
  let jsm: JetStreamManager;
  beforeAll(async () => {
    nats = await startNatsServer();
    connection = await connectNats(nats.url, 'webhook-test', createLogger('webhook-test', 'silent'));
    jsm = await jetstreamManager(connection);
    await ensureWebhookChangesStream(jsm, limits);
  });
  afterAll(async () => {
    await connection?.close();
    await nats?.stop();
  });

  it('are stored before the change is answered', async () => {
    const system = await startSystem({ services: ['token', 'gateway', 'project', 'webhook'], env: { NATS_URL: nats.url } });
    try {
      const team = await bootstrapTeam(system);
      const client = api(system, team.token);
      for (let round = 0; round < 5; round++) {
        const created = await client.post(`/teams/${team.team_id}/webhooks`, { url: PUBLIC_URL, events: ['issue.created'], secret: SECRET });
        expect(created.status).toBe(201);
        expect(await lastNotice(jsm)).toEqual({ team_id: team.team_id, webhook_id: created.body.id, change: 'created' });
        expect((await client.delete(`/teams/${team.team_id}/webhooks/${created.body.id}`)).status).toBe(204);
        expect(await lastNotice(jsm)).toEqual({ team_id: team.team_id, webhook_id: created.body.id, change: 'deleted' });
      }
    } finally {
      await system.stop();
    }
  }, 120_000);

  it('answers 503 when NATS cannot take a notice, keeps the change, and publishes the notice once NATS is back', async () => {
    const notifierConnection = await connectNats(nats.url, 'webhook-notifier', createLogger('webhook-test', 'silent'));
    const notifier = new JetStreamChangeNotifier({
      js: jetstream(notifierConnection),
      logger: createLogger('webhook-test', 'silent'),
      registry: new promClient.Registry(),
      timeoutMs: 300,
      retryIntervalMs: 100,
    });
    const service = await startDirectWebhookService({ notifier });
    try {
      const team = service.as(TEAM);
      const created = await team.post(`/api/v1/teams/${TEAM}/webhooks`, { url: PUBLIC_URL, events: ['issue.created'] });
      expect(created.status).toBe(201);
      const path = `/api/v1/teams/${TEAM}/webhooks/${created.body.id}`;

      await connection.close();
      await nats.shutdown();
      const changed = await team.patch(path, { description: 'changed while NATS was away' });
      expect(changed.status).toBe(503);
      expect((await team.get(path)).body.description).toBe('changed while NATS was away');

      await nats.start();
      connection = await connectNats(nats.url, 'webhook-test', createLogger('webhook-test', 'silent'));
      jsm = await jetstreamManager(connection);
      for (;;) {
        const notice = await lastNotice(jsm).catch(() => undefined);
        if (notice?.change === 'updated' && notice.webhook_id === created.body.id) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await notifier.stop();
      await service.stop();
      await notifierConnection.close();
    }
  }, 60_000);
});
