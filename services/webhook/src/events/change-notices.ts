import { WEBHOOK_CHANGES_SUBJECT, encodeWebhookChange, type JetStreamClient, type WebhookChange } from '@worklane/messaging';
import { BackgroundWorker, DependencyUnavailableError, promClient, type Logger } from '@worklane/observability';

/**
 * Tells the delivery service that a team's webhooks changed, after the change is committed and
 * before the API call that made it is answered: the delivery service keeps the webhooks in memory
 * and forgets a team's on its notice (docs/webhook-directory-cache.md).
 */
export interface WebhookChangeNotifier {
  /** Resolves once the notice is stored by NATS; rejects with a DependencyUnavailableError otherwise. */
  notify(change: WebhookChange): Promise<void>;
}

export interface JetStreamChangeNotifierOptions {
  js: JetStreamClient;
  logger: Logger;
  registry: promClient.Registry;
  /** How long one publish waits for the stream's acknowledgement (WEBHOOK_CHANGE_PUBLISH_TIMEOUT_MS). */
  timeoutMs: number;
  /** Pause between attempts to publish notices that could not be published while answering. */
  retryIntervalMs?: number;
}

/**
 * Publishes each notice to the WEBHOOK_CHANGES stream and waits for its acknowledgement. When NATS
 * cannot take it, the API call is answered 503 (the change itself is committed: the next read shows
 * it) and the notice is published again in the background until NATS takes it, one per team at
 * most, so delivery replicas learn of the change as soon as NATS is back.
 */
export class JetStreamChangeNotifier implements WebhookChangeNotifier {
  private readonly pending = new Map<number, WebhookChange>();
  private readonly published: promClient.Counter<'outcome'>;
  /** Publishes the notices NATS did not take while answering, started at the first one. */
  private readonly retries: BackgroundWorker;

  constructor(private readonly options: JetStreamChangeNotifierOptions) {
    const intervalMs = options.retryIntervalMs ?? 1_000;
    this.retries = new BackgroundWorker({
      name: 'webhook change notices',
      logger: options.logger,
      registry: options.registry,
      idleMs: intervalMs,
      minBackoffMs: intervalMs,
      maxBackoffMs: intervalMs,
      pass: () => this.retry(),
    });
    this.published = new promClient.Counter({
      name: 'worklane_webhook_change_notices_total',
      help: 'Webhook change notices published for the delivery service, by outcome (published, failed)',
      labelNames: ['outcome'],
      registers: [options.registry],
    });
    const pending = this.pending;
    new promClient.Gauge({
      name: 'worklane_webhook_change_notices_pending',
      help: 'Teams whose latest webhook change notice NATS has not taken yet',
      registers: [options.registry],
      collect() {
        this.set(pending.size);
      },
    });
  }

  async notify(change: WebhookChange): Promise<void> {
    try {
      await this.publish(change);
      this.pending.delete(change.team_id);
    } catch (error) {
      this.options.logger.warn({ err: error, teamId: change.team_id, webhookId: change.webhook_id }, 'webhook change notice not published; retrying in the background');
      this.pending.set(change.team_id, change);
      this.retries.start();
      throw new DependencyUnavailableError('NATS', error);
    }
  }

  /** Stops the background retries (shutdown); notices still pending are left to the caches' expiry. */
  async stop(): Promise<void> {
    await this.retries.stop();
    if (this.pending.size > 0) this.options.logger.error({ teams: [...this.pending.keys()] }, 'webhook change notices never published');
  }

  private async publish(change: WebhookChange): Promise<void> {
    try {
      await this.options.js.publish(WEBHOOK_CHANGES_SUBJECT, encodeWebhookChange(change), { timeout: this.options.timeoutMs });
      this.published.inc({ outcome: 'published' });
    } catch (error) {
      this.published.inc({ outcome: 'failed' });
      throw error;
    }
  }

  /** One round over the pending notices, oldest team first; a failure ends it and the worker backs off. */
  private async retry(): Promise<'idle'> {
    for (const [teamId, change] of [...this.pending]) {
      await this.publish(change);
      // A newer notice for the team may have replaced this one meanwhile: it stays pending.
      if (this.pending.get(teamId) === change) this.pending.delete(teamId);
    }
    return 'idle';
  }
}
