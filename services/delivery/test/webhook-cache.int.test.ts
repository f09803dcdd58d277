// The delivery pipeline reads webhooks from memory, kept current by the webhook service's change
// notices on WEBHOOK_CHANGES (docs/webhook-directory-cache.md): a change made through the API is
// seen by the very next event, and a NATS reconnect empties the cache.
import { createPool, type Pool } from '@worklane/db';
import {
  WEBHOOK_CHANGES_STREAM,
  WEBHOOK_CHANGES_SUBJECT,
  connectNats,
  encodeWebhookChange,
  ensureWebhookChangesStream,
  jetstream,
  jetstreamManager,
  webhookChangesLimitsFrom,
  type JetStreamManager,
  type NatsConnection,
  type WebhookChange,
} from '@worklane/messaging';
import { createLogger, promClient } from '@worklane/observability';
import { WebhookChangeFeed, type ChangeListener, type ForgetReason } from '../src/clients/webhook-changes';
import { signatureProblems } from './support/signatures';
import { createIssue, createWebhook, eventually, payloadOf, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

let env: DeliverySystem;
let team: TestTeam;
let pool: Pool;

beforeAll(async () => {
  env = await startDeliverySystem();
  team = await env.newTeam('Cache team');
  pool = createPool({ url: env.system.databaseUrl, schema: 'delivery', max: 2, applicationName: 'webhook-cache-test' });
}, 120_000);
afterAll(async () => {
  await pool?.end();
  await env?.stop();
});

const metrics = async () => (await fetch(`${env.system.services.delivery!.metricsUrl}/metrics`)).text();
/** The sum of `name` over the series whose labels include every one of `labels`. */
const metricSum = (text: string, name: string, ...labels: string[]) =>
  text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => labels.every((label) => line.includes(label)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);

const received = (path: string, issueId: number) => env.receiver.at(path).filter((request) => payloadOf(request).issue.id === issueId);
const deliveriesOf = async (webhookId: number) => Number((await pool.query('SELECT count(*) AS n FROM deliveries WHERE webhook_id = $1', [webhookId])).rows[0].n);

describe('a change through the API is seen by the very next event', () => {
  it('created, edited, rotated, switched off and deleted webhooks, each once the call returned', async () => {
    const { receiver } = env;
    const first = await createWebhook(team, { url: receiver.url('/first'), events: ['issue.created'], secret: 'whsec_first-0123456789' });
    // Warms the cache for the team: the next events find its subscribers in memory.
    const warm = await createIssue(team, { title: 'Warm up' });
    await receiver.waitFor(() => received('/first', warm.id).length === 1);
    const afterWarm = metricSum(await metrics(), 'worklane_delivery_webhook_cache_lookups_total', 'result="hit"');
    const again = await createIssue(team, { title: 'From memory' });
    await receiver.waitFor(() => received('/first', again.id).length === 1);
    expect(metricSum(await metrics(), 'worklane_delivery_webhook_cache_lookups_total', 'result="hit"')).toBeGreaterThan(afterWarm);

    // Created: among the targets of the next event.
    const second = await createWebhook(team, { url: receiver.url('/second'), events: ['issue.created'] });
    const afterCreate = await createIssue(team, { title: 'After create' });
    await receiver.waitFor(() => received('/first', afterCreate.id).length === 1 && received('/second', afterCreate.id).length === 1);

    // Edited: the next event goes to the new URL only.
    expect((await team.client.patch(`/teams/${team.team_id}/webhooks/${second.id}`, { url: receiver.url('/second-moved') })).status).toBe(200);
    const afterEdit = await createIssue(team, { title: 'After edit' });
    await receiver.waitFor(() => received('/first', afterEdit.id).length === 1 && received('/second-moved', afterEdit.id).length === 1);
    expect(received('/second', afterEdit.id)).toHaveLength(0);

    // Rotated without overlap: the next event is signed by the new secret alone.
    const rotated = await team.client.post(`/teams/${team.team_id}/webhooks/${first.id}/secret/rotate`, { secret: 'whsec_rotated-0123456789', overlap_seconds: 0 });
    expect(rotated.status).toBe(200);
    const afterRotate = await createIssue(team, { title: 'After rotation' });
    await receiver.waitFor(() => received('/first', afterRotate.id).length === 1);
    const signed = received('/first', afterRotate.id)[0]!;
    expect(signatureProblems(signed, 'whsec_rotated-0123456789')).toEqual([]);
    expect(signatureProblems(signed, 'whsec_first-0123456789')).not.toEqual([]);

    // Switched off: the next event creates no delivery for it.
    expect((await team.client.patch(`/teams/${team.team_id}/webhooks/${second.id}`, { active: false })).status).toBe(200);
    const beforeOff = await deliveriesOf(second.id);
    const afterOff = await createIssue(team, { title: 'After switching off' });
    await receiver.waitFor(() => received('/first', afterOff.id).length === 1);
    expect(await deliveriesOf(second.id)).toBe(beforeOff);

    // Deleted: likewise.
    const third = await createWebhook(team, { url: receiver.url('/third'), events: ['issue.created'] });
    const beforeDelete = await createIssue(team, { title: 'Before delete' });
    await receiver.waitFor(() => received('/third', beforeDelete.id).length === 1);
    expect((await team.client.delete(`/teams/${team.team_id}/webhooks/${third.id}`)).status).toBe(204);
    const afterDelete = await createIssue(team, { title: 'After delete' });
    await receiver.waitFor(() => received('/first', afterDelete.id).length === 1);
    expect(await deliveriesOf(third.id)).toBe(1);

    const text = await metrics();
    expect(metricSum(text, 'worklane_delivery_webhook_cache_invalidations_total', 'reason="change"')).toBeGreaterThanOrEqual(6);
    expect(text).not.toContain('whsec_');
  });
});

describe('NATS reconnects', () => {
  it('empty the cache, and events keep reaching their webhooks', async () => {
    const other = await env.newTeam('Reconnect team');
    const webhook = await createWebhook(other, { url: env.receiver.url('/reconnect'), events: ['issue.created'] });
    const before = await createIssue(other, { title: 'Before the restart' });
    await env.receiver.waitFor(() => received('/reconnect', before.id).length === 1);
    expect(metricSum(await metrics(), 'worklane_delivery_webhook_cache_entries')).toBeGreaterThan(0);
    const reconnects = metricSum(await metrics(), 'worklane_delivery_webhook_cache_invalidations_total', 'reason="reconnect"');

    await env.nats.restart();
    await eventually(
      metrics,
      (text) => metricSum(text, 'worklane_delivery_webhook_cache_invalidations_total', 'reason="reconnect"') > reconnects,
      20_000,
      'the delivery service to reconnect',
    );
    const misses = metricSum(await metrics(), 'worklane_delivery_webhook_cache_lookups_total', 'lookup="subscriptions"', 'result="miss"');
    const after = await createIssue(other, { title: 'After the restart' });
    await env.receiver.waitFor(() => received('/reconnect', after.id).length === 1, 30_000);
    expect(metricSum(await metrics(), 'worklane_delivery_webhook_cache_lookups_total', 'lookup="subscriptions"', 'result="miss"')).toBeGreaterThan(misses);
    expect(webhook.id).toBeGreaterThan(0);
  }, 60_000);
});

describe('the change feed', () => {
  let reader: NatsConnection;
  let writer: NatsConnection;
  const logger = createLogger('webhook-cache-test', 'silent');
  const limits = webhookChangesLimitsFrom({ WEBHOOK_CHANGES_REPLICAS: 1, WEBHOOK_CHANGES_MAX_AGE_SECONDS: 3_600, WEBHOOK_CHANGES_MAX_MSGS: 100_000 });
  beforeAll(async () => {
    [reader, writer] = await Promise.all([connectNats(env.nats.url, 'feed-reader', logger), connectNats(env.nats.url, 'feed-writer', logger)]);
  });
  afterAll(async () => {
    await Promise.all([reader?.close(), writer?.close()]);
  });

  /** A feed on the reader's connection: `checks` answers its stream position requests, `streams` declares the stream. */
  const changeFeed = (checks: JetStreamManager, streams: JetStreamManager, listener: ChangeListener) =>
    new WebhookChangeFeed({
      js: jetstream(reader),
      jsm: checks,
      listener,
      logger,
      registry: new promClient.Registry(),
      syncTimeoutMs: 5_000,
      maxChecksInFlight: 4,
      declare: () => ensureWebhookChangesStream(streams, limits),
    });

  it('has applied every notice acknowledged before a check began when the check says so', async () => {
    const seen: WebhookChange[] = [];
    const forgotten: ForgetReason[] = [];
    const jsm = await jetstreamManager(reader);
    const feed = changeFeed(await jetstreamManager(reader, { timeout: 5_000, checkAPI: false }), jsm, {
      changed: (change) => seen.push(change),
      forgetAll: (reason) => forgotten.push(reason),
    });
    await feed.start();
    try {
      expect(forgotten).toEqual(['start']);
      const js = jetstream(writer);
      for (let round = 1; round <= 20; round++) {
        const change: WebhookChange = { team_id: 9_000 + round, webhook_id: round, change: 'updated' };
        await js.publish(WEBHOOK_CHANGES_SUBJECT, encodeWebhookChange(change));
        // Acknowledged on another connection, then checked: the notice has been applied.
        expect(await feed.caughtUp()).toBe(true);
        expect(seen.filter((notice) => notice.team_id === change.team_id)).toEqual([change]);
      }
      // Several reads at once share checks, each still answered.
      expect(await Promise.all(Array.from({ length: 10 }, () => feed.caughtUp()))).toEqual(Array(10).fill(true));
      expect((await jsm.streams.info(WEBHOOK_CHANGES_STREAM)).state.last_seq).toBeGreaterThanOrEqual(20);
    } finally {
      await feed.stop();
    }
    // Stopped: nothing can be confirmed any more.
    expect(await feed.caughtUp()).toBe(false);
  });

  it('answers a read that begins while another check is out with a check of its own, without waiting for that one', async () => {
    const seen: WebhookChange[] = [];
    const jsm = await jetstreamManager(reader);
    const direct = await jetstreamManager(reader, { timeout: 5_000, checkAPI: false });
    // The next request for the stream position is held until released; the others go through.
    let hold = false;
    let held: (() => void) | undefined;
    let heldAsked = false;
    const gated = {
      streams: {
        info: async (name: string) => {
          if (hold) {
            hold = false;
            heldAsked = true;
            await new Promise<void>((resolve) => (held = resolve));
          }
          return direct.streams.info(name);
        },
      },
    } as unknown as JetStreamManager;
    const feed = changeFeed(gated, jsm, { changed: (change) => seen.push(change), forgetAll: () => {} });
    await feed.start();
    try {
      hold = true;
      let firstSettled = false;
      const first = feed.caughtUp().finally(() => (firstSettled = true));
      await eventually(
        async () => heldAsked,
        (asked) => asked,
      );
      // A change acknowledged while the first check is out: the next read must see it, and gets
      // its answer while the first check is still held.
      const change: WebhookChange = { team_id: 9_500, webhook_id: 1, change: 'updated' };
      await jetstream(writer).publish(WEBHOOK_CHANGES_SUBJECT, encodeWebhookChange(change));
      expect(await feed.caughtUp()).toBe(true);
      expect(seen).toContainEqual(change);
      expect(firstSettled).toBe(false);
      held?.();
      expect(await first).toBe(true);
    } finally {
      held?.();
      await feed.stop();
    }
  });
});
