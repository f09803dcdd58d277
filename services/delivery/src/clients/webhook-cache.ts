import type { WebhookChange } from '@worklane/messaging';
import { promClient } from '@worklane/observability';
import type { ChangeBarrier, ChangeListener, ForgetReason } from './webhook-changes';
import type { WebhookDirectory, WebhookTarget } from './webhooks';

export interface WebhookCacheOptions {
  /** The webhook service: asked on a miss, and for every read the barrier cannot vouch for. */
  directory: WebhookDirectory;
  /** Confirms that every change notice stored before a read has been applied. */
  barrier: ChangeBarrier;
  /** Webhooks kept at most (DELIVERY_WEBHOOK_CACHE_MAX_ENTRIES); 0: nothing is kept, every read asks. */
  maxEntries: number;
  /** Longest an answer is kept even without a notice (DELIVERY_WEBHOOK_CACHE_TTL_MS). */
  ttlMs: number;
  registry: promClient.Registry;
  now?: () => number;
}

interface Kept<T> {
  value: T;
  keptAtMs: number;
  /** Entries it counts against maxEntries. */
  weight: number;
}

/** What is known of one team: its subscribers per event name, and its webhooks by id (null: none such). */
interface TeamEntry {
  subscriptions: Map<string, Kept<WebhookTarget[]>>;
  webhooks: Map<number, Kept<WebhookTarget | null>>;
}

/**
 * The webhook directory kept in memory, so that fanning out an event and sending a delivery cost no
 * call to the webhook service in the common case (docs/webhook-directory-cache.md).
 *
 * Every read first passes the change barrier; a team's entries are dropped when a notice for it is
 * applied, everything is dropped when notices may have been missed (reconnect, a gap in the stream,
 * the follower starting again). An answer from the webhook service is only kept when no notice was
 * applied while it was being fetched, since it may have been read before the change. Together this
 * makes every read as current as asking the webhook service at the moment of the read: a webhook
 * created before an event was committed is among that event's targets, and a webhook deleted or
 * switched off before an attempt starts receives nothing. Answers are shared, never copied: callers
 * must not change them. Secrets stay in memory only, as they did with the per-call lookups.
 */
export class CachedWebhookDirectory implements WebhookDirectory, ChangeListener {
  /** Least recently used first. */
  private readonly teams = new Map<number, TeamEntry>();
  private entries = 0;
  /** Bumped by every applied notice or wholesale drop: a fetch begun before it is not kept. */
  private version = 0;
  private readonly fetching = new Map<string, Promise<unknown>>();
  private readonly now: () => number;
  private readonly lookups: promClient.Counter<'lookup' | 'result'>;
  private readonly invalidations: promClient.Counter<'reason'>;
  private readonly evictions: promClient.Counter;

  constructor(private readonly options: WebhookCacheOptions) {
    this.now = options.now ?? (() => performance.now());
    this.lookups = new promClient.Counter({
      name: 'worklane_delivery_webhook_cache_lookups_total',
      help: 'Webhook directory reads by the delivery pipeline: hit (answered from memory), miss (fetched from the webhook service and kept), bypass (fetched because the change notices could not be confirmed, or the cache is off)',
      labelNames: ['lookup', 'result'],
      registers: [options.registry],
    });
    this.invalidations = new promClient.Counter({
      name: 'worklane_delivery_webhook_cache_invalidations_total',
      help: "Webhook cache drops: change (a team's notice), and everything at once on start, reconnect, gap, unreadable or restart of the change follower",
      labelNames: ['reason'],
      registers: [options.registry],
    });
    this.evictions = new promClient.Counter({
      name: 'worklane_delivery_webhook_cache_evictions_total',
      help: 'Teams dropped from the webhook cache to stay within DELIVERY_WEBHOOK_CACHE_MAX_ENTRIES',
      registers: [options.registry],
    });
    const entries = () => this.entries;
    new promClient.Gauge({
      name: 'worklane_delivery_webhook_cache_entries',
      help: 'Webhooks (and empty answers) held by the webhook cache',
      registers: [options.registry],
      collect() {
        this.set(entries());
      },
    });
  }

  changed(change: WebhookChange): void {
    this.version++;
    this.fetching.clear();
    this.invalidations.inc({ reason: 'change' });
    const team = this.teams.get(change.team_id);
    if (!team) return;
    this.entries -= weightOf(team);
    this.teams.delete(change.team_id);
  }

  forgetAll(reason: ForgetReason): void {
    this.version++;
    this.fetching.clear();
    this.invalidations.inc({ reason });
    this.teams.clear();
    this.entries = 0;
  }

  async listSubscriptions(teamId: number, event: string): Promise<WebhookTarget[]> {
    if (!(await this.usable())) {
      this.lookups.inc({ lookup: 'subscriptions', result: 'bypass' });
      return this.options.directory.listSubscriptions(teamId, event);
    }
    const kept = this.fresh(this.teams.get(teamId)?.subscriptions.get(event));
    if (kept) {
      this.touch(teamId);
      this.lookups.inc({ lookup: 'subscriptions', result: 'hit' });
      return kept.value;
    }
    this.lookups.inc({ lookup: 'subscriptions', result: 'miss' });
    return this.fetch(
      `s/${teamId}/${event}`,
      teamId,
      () => this.options.directory.listSubscriptions(teamId, event),
      (team, targets, keptAtMs) => {
        this.keep(team.subscriptions, event, { value: targets, keptAtMs, weight: Math.max(1, targets.length) });
        // Each subscriber is also the answer to a lookup of it by id, which the sender makes next.
        for (const target of targets) {
          if (target.teamId === teamId && !team.webhooks.has(target.id)) this.keep(team.webhooks, target.id, { value: target, keptAtMs, weight: 1 });
        }
      },
    );
  }

  async getWebhook(teamId: number, webhookId: number): Promise<WebhookTarget | undefined> {
    if (!(await this.usable())) {
      this.lookups.inc({ lookup: 'webhook', result: 'bypass' });
      return this.options.directory.getWebhook(teamId, webhookId);
    }
    const kept = this.fresh(this.teams.get(teamId)?.webhooks.get(webhookId));
    if (kept) {
      this.touch(teamId);
      this.lookups.inc({ lookup: 'webhook', result: 'hit' });
      return kept.value ?? undefined;
    }
    this.lookups.inc({ lookup: 'webhook', result: 'miss' });
    const found = await this.fetch(
      `w/${teamId}/${webhookId}`,
      teamId,
      () => this.options.directory.getWebhook(teamId, webhookId),
      (team, webhook, keptAtMs) => this.keep(team.webhooks, webhookId, { value: webhook ?? null, keptAtMs, weight: 1 }),
    );
    return found;
  }

  async disableWebhook(teamId: number, webhookId: number, reason: string): Promise<WebhookTarget | undefined> {
    try {
      return await this.options.directory.disableWebhook(teamId, webhookId, reason);
    } finally {
      // The webhook service announces it too; this replica need not wait for the notice.
      this.changed({ team_id: teamId, webhook_id: webhookId, change: 'disabled' });
    }
  }

  private usable(): Promise<boolean> | boolean {
    return this.options.maxEntries > 0 && this.options.barrier.caughtUp();
  }

  private fresh<T>(kept: Kept<T> | undefined): Kept<T> | undefined {
    return kept && this.now() - kept.keptAtMs < this.options.ttlMs ? kept : undefined;
  }

  /**
   * One fetch per key at a time; a notice applied meanwhile detaches it (later readers fetch again)
   * and keeps its answer out of the cache, though the readers that were waiting for it get it: the
   * notice was stored after their reads began.
   */
  private fetch<T>(key: string, teamId: number, read: () => Promise<T>, keep: (team: TeamEntry, value: T, keptAtMs: number) => void): Promise<T> {
    const under = this.fetching.get(key) as Promise<T> | undefined;
    if (under) return under;
    const version = this.version;
    const keptAtMs = this.now();
    const fetched = read().then(
      (value) => {
        if (this.fetching.get(key) === fetched) this.fetching.delete(key);
        if (this.version === version) {
          keep(this.team(teamId), value, keptAtMs);
          this.evict();
        }
        return value;
      },
      (error: unknown) => {
        if (this.fetching.get(key) === fetched) this.fetching.delete(key);
        throw error;
      },
    );
    this.fetching.set(key, fetched);
    return fetched;
  }

  private team(teamId: number): TeamEntry {
    let team = this.teams.get(teamId);
    if (!team) {
      team = { subscriptions: new Map(), webhooks: new Map() };
      this.teams.set(teamId, team);
    } else {
      this.touch(teamId);
    }
    return team;
  }

  private keep<K, T>(map: Map<K, Kept<T>>, key: K, kept: Kept<T>): void {
    this.entries += kept.weight - (map.get(key)?.weight ?? 0);
    map.set(key, kept);
  }

  private touch(teamId: number): void {
    const team = this.teams.get(teamId);
    if (!team) return;
    this.teams.delete(teamId);
    this.teams.set(teamId, team);
  }

  private evict(): void {
    for (const [teamId, team] of this.teams) {
      if (this.entries <= this.options.maxEntries) return;
      this.entries -= weightOf(team);
      this.teams.delete(teamId);
      this.evictions.inc();
    }
  }
}

function weightOf(team: TeamEntry): number {
  let weight = 0;
  for (const kept of team.subscriptions.values()) weight += kept.weight;
  for (const kept of team.webhooks.values()) weight += kept.weight;
  return weight;
}
