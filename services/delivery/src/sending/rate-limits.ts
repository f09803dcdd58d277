import type { Logger } from '@worklane/observability';
import type { WebhookTarget } from '../clients/webhooks';
import type { EndpointRateLimit, EndpointRateStore } from '../data/endpoint-rates';

/**
 * Keeps the per-endpoint rate limits the claim enforces in step with the webhooks as the webhook
 * service describes them. Every answer it gives (the fan-out's subscriptions, the sender's look-up
 * before attempts) is passed to `observe`; the database is written only for a limit this replica
 * has not stored yet, so the usual case costs no query. Deliveries are stored after their
 * webhook's limit is, so the first claim of a newly limited endpoint already respects it.
 */
export class EndpointRateLimits {
  /** The limit this replica last stored per webhook (null: none). */
  private readonly stored = new Map<number, number | null>();

  constructor(
    private readonly store: EndpointRateStore,
    private readonly logger?: Logger,
  ) {}

  /** Stores the limits of these webhooks that changed since this replica last stored them. */
  async observe(webhooks: Iterable<Pick<WebhookTarget, 'id' | 'teamId' | 'rateLimitPerSecond'>>): Promise<void> {
    const changed = new Map<number, EndpointRateLimit>();
    for (const webhook of webhooks) {
      const perSecond = webhook.rateLimitPerSecond ?? null;
      if (this.stored.has(webhook.id) && this.stored.get(webhook.id) === perSecond) continue;
      changed.set(webhook.id, { webhookId: webhook.id, teamId: webhook.teamId, perSecond });
    }
    if (changed.size === 0) return;
    const limits = [...changed.values()];
    await this.store.setLimits(limits);
    for (const limit of limits) this.stored.set(limit.webhookId, limit.perSecond);
    this.logger?.debug({ webhooks: limits.length }, 'endpoint rate limits stored');
  }

  /** Like `observe`, for work that must not fail because of it: a failure is logged, and retried at the next sight. */
  observeQuietly(webhooks: Iterable<Pick<WebhookTarget, 'id' | 'teamId' | 'rateLimitPerSecond'>>): void {
    this.observe(webhooks).catch((error) => this.logger?.warn({ err: error }, 'storing endpoint rate limits failed'));
  }

  /**
   * Whether an attempt may start now to `webhook`, as the directory describes it at this moment,
   * for a delivery whose claim spent the buckets of `claimedUnder` deliveries a second (null: the
   * claim knew of no limit). The database learns of a new or lowered limit when this service next
   * sees the webhook, which may be after a claim: such a claim did not pace the delivery by it.
   * Then the limit is stored (before this resolves) and the answer is false: the caller gives the
   * delivery back, unattempted, and the next claim paces it. So once an edit of the limit has
   * returned, no attempt starts outside it.
   */
  async admits(claimedUnder: number | null, webhook: Pick<WebhookTarget, 'id' | 'teamId' | 'rateLimitPerSecond'>): Promise<boolean> {
    const perSecond = webhook.rateLimitPerSecond ?? null;
    if (withinLimit(claimedUnder, perSecond)) return true;
    // Written whatever this replica stored before: the table is what the claim reads, and another
    // replica's late write may have left it behind.
    await this.store.setLimits([{ webhookId: webhook.id, teamId: webhook.teamId, perSecond }]);
    this.stored.set(webhook.id, perSecond);
    this.logger?.debug({ webhookId: webhook.id, claimedUnder, limit: webhook.rateLimitPerSecond }, 'delivery claimed before its rate limit was stored; paced again');
    return false;
  }

  /** Forgets a webhook (deleted): the next sight of the same id stores its limit again. */
  forget(webhookId: number): void {
    this.stored.delete(webhookId);
  }
}

/**
 * Whether a claim that spent the buckets of `claimedUnder` per second (null: no limit) kept to the
 * webhook's current `limit` (null: none): a claim under the same or a lower limit did.
 */
export function withinLimit(claimedUnder: number | null, limit: number | null): boolean {
  if (limit === null) return true;
  return claimedUnder !== null && claimedUnder <= limit;
}
