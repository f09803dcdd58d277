import { promClient } from '@worklane/observability';
import { webhookTarget } from '../../test/support/webhook-target';
import { CachedWebhookDirectory } from './webhook-cache';
import type { WebhookDirectory, WebhookTarget } from './webhooks';

const target = (id: number, teamId = 1): WebhookTarget => webhookTarget(id, teamId);

/** A webhook service whose answers the test releases one by one. */
class FakeService implements WebhookDirectory {
  readonly webhooks = new Map<number, WebhookTarget>();
  calls = 0;
  private held: (() => void)[] = [];
  hold = false;

  async listSubscriptions(teamId: number, event: string): Promise<WebhookTarget[]> {
    this.calls++;
    const answer = [...this.webhooks.values()].filter((webhook) => webhook.teamId === teamId && webhook.active && webhook.events.includes(event));
    await this.gate();
    return answer;
  }
  async getWebhook(teamId: number, webhookId: number): Promise<WebhookTarget | undefined> {
    this.calls++;
    const webhook = this.webhooks.get(webhookId);
    const answer = webhook?.teamId === teamId ? webhook : undefined;
    await this.gate();
    return answer;
  }
  async disableWebhook(teamId: number, webhookId: number): Promise<WebhookTarget | undefined> {
    const webhook = this.webhooks.get(webhookId);
    if (webhook?.teamId !== teamId) return undefined;
    const disabled = { ...webhook, active: false };
    this.webhooks.set(webhookId, disabled);
    return disabled;
  }
  release(): void {
    for (const go of this.held.splice(0)) go();
  }
  private gate(): Promise<void> {
    return this.hold ? new Promise((resolve) => this.held.push(resolve)) : Promise.resolve();
  }
}

function setUp(options: { maxEntries?: number; ttlMs?: number } = {}) {
  const service = new FakeService();
  const barrier = { ok: true, caughtUp: async () => barrier.ok };
  let nowMs = 0;
  const cache = new CachedWebhookDirectory({
    directory: service,
    barrier,
    maxEntries: options.maxEntries ?? 100,
    ttlMs: options.ttlMs ?? 60_000,
    registry: new promClient.Registry(),
    now: () => nowMs,
  });
  return { service, barrier, cache, advance: (ms: number) => (nowMs += ms) };
}

describe('CachedWebhookDirectory', () => {
  it('answers a repeated read from memory, and a subscriber by id without asking again', async () => {
    const { service, cache } = setUp();
    service.webhooks.set(1, target(1));
    expect((await cache.listSubscriptions(1, 'issue.created')).map((webhook) => webhook.id)).toEqual([1]);
    expect((await cache.listSubscriptions(1, 'issue.created')).map((webhook) => webhook.id)).toEqual([1]);
    expect((await cache.getWebhook(1, 1))?.url).toBe('https://receiver.example/1');
    expect(service.calls).toBe(1);
  });

  it('forgets a team on its change notice, and only that team', async () => {
    const { service, cache } = setUp();
    service.webhooks.set(1, target(1, 1));
    service.webhooks.set(2, target(2, 2));
    await cache.listSubscriptions(1, 'issue.created');
    await cache.listSubscriptions(2, 'issue.created');
    service.webhooks.set(3, target(3, 1));
    cache.changed({ team_id: 1, webhook_id: 3, change: 'created' });
    expect((await cache.listSubscriptions(1, 'issue.created')).map((webhook) => webhook.id)).toEqual([1, 3]);
    await cache.listSubscriptions(2, 'issue.created');
    expect(service.calls).toBe(3);
  });

  it('does not keep an answer fetched while a notice was applied: it may predate the change', async () => {
    const { service, cache } = setUp();
    service.webhooks.set(1, target(1));
    service.hold = true;
    const early = cache.listSubscriptions(1, 'issue.created');
    await new Promise((resolve) => setImmediate(resolve));
    // The change commits and its notice is applied while the old answer is on its way.
    service.webhooks.set(2, target(2));
    cache.changed({ team_id: 1, webhook_id: 2, change: 'created' });
    // A read that starts after the notice does not join the old fetch.
    const late = cache.listSubscriptions(1, 'issue.created');
    await new Promise((resolve) => setImmediate(resolve));
    service.release();
    await new Promise((resolve) => setImmediate(resolve));
    service.release();
    expect((await early).map((webhook) => webhook.id)).toEqual([1]);
    expect((await late).map((webhook) => webhook.id)).toEqual([1, 2]);
    service.hold = false;
    expect((await cache.listSubscriptions(1, 'issue.created')).map((webhook) => webhook.id)).toEqual([1, 2]);
  });

  it('asks the webhook service, and keeps nothing, while the notices cannot be confirmed', async () => {
    const { service, barrier, cache } = setUp();
    service.webhooks.set(1, target(1));
    barrier.ok = false;
    await cache.listSubscriptions(1, 'issue.created');
    await cache.getWebhook(1, 1);
    barrier.ok = true;
    await cache.getWebhook(1, 1);
    expect(service.calls).toBe(3);
  });

  it('forgets everything at once when notices may have been missed', async () => {
    const { service, cache } = setUp();
    service.webhooks.set(1, target(1));
    await cache.getWebhook(1, 1);
    cache.forgetAll('reconnect');
    await cache.getWebhook(1, 1);
    expect(service.calls).toBe(2);
  });

  it('remembers that a webhook does not exist, until a notice for its team', async () => {
    const { service, cache } = setUp();
    expect(await cache.getWebhook(1, 9)).toBeUndefined();
    expect(await cache.getWebhook(1, 9)).toBeUndefined();
    expect(service.calls).toBe(1);
  });

  it('keeps an answer no longer than the TTL', async () => {
    const { service, cache, advance } = setUp({ ttlMs: 1_000 });
    service.webhooks.set(1, target(1));
    await cache.getWebhook(1, 1);
    advance(999);
    await cache.getWebhook(1, 1);
    advance(1);
    await cache.getWebhook(1, 1);
    expect(service.calls).toBe(2);
  });

  it('drops the least recently used teams beyond its size', async () => {
    const { service, cache } = setUp({ maxEntries: 2 });
    for (const team of [1, 2, 3]) service.webhooks.set(team, target(team, team));
    await cache.getWebhook(1, 1);
    await cache.getWebhook(2, 2);
    await cache.getWebhook(1, 1); // team 1 is now the most recent
    await cache.getWebhook(3, 3); // team 2 goes
    expect(service.calls).toBe(3);
    await cache.getWebhook(1, 1);
    await cache.getWebhook(3, 3);
    expect(service.calls).toBe(3);
    await cache.getWebhook(2, 2);
    expect(service.calls).toBe(4);
  });

  it('with a size of 0 asks the webhook service every time', async () => {
    const { service, cache } = setUp({ maxEntries: 0 });
    service.webhooks.set(1, target(1));
    await cache.getWebhook(1, 1);
    await cache.getWebhook(1, 1);
    expect(service.calls).toBe(2);
  });

  it('forgets the team of a webhook it switches off', async () => {
    const { service, cache } = setUp();
    service.webhooks.set(1, target(1));
    expect((await cache.getWebhook(1, 1))?.active).toBe(true);
    await cache.disableWebhook(1, 1, 'failing for 5 days');
    expect((await cache.getWebhook(1, 1))?.active).toBe(false);
  });
});
