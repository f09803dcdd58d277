import { BackgroundWorker, type Logger, type PassResult, type Registry } from '@worklane/observability';
import { DirectoryUnavailableError, type WebhookDirectory } from '../clients/webhooks';
import type { RecoveryStore } from './store';

export interface RecoveryWorkerOptions {
  store: RecoveryStore;
  webhooks: WebhookDirectory;
  logger: Logger;
  /** Re-sends per second of a webhook without a rate limit (DELIVERY_RECOVERY_DEFAULT_PER_SECOND). */
  defaultPerSecond: number;
  /** Re-sends created per step at most (DELIVERY_RECOVERY_BATCH_SIZE). */
  batchSize: number;
  /** Longest wait between looks for due jobs (DELIVERY_POLL_INTERVAL_MS); a new job wakes the worker. */
  idleMs: number;
  /** Finished jobs are removed after this long (DELIVERY_RETENTION_DAYS). */
  retentionMs: number;
  /** Re-sends were created: the sender should look now. */
  onDeliveriesCreated: () => void;
  registry?: Registry | undefined;
}

/** Jobs stepped per pass; more wait for the next pass, which follows at once. */
const JOBS_PER_PASS = 20;
/** How long a job waits when the webhook service cannot say whether its webhook still exists. */
const DIRECTORY_RETRY_MS = 5_000;
/** Finished jobs removed per pass at most. */
const REMOVED_PER_PASS = 100;

/** The pace of a webhook's recovery: its rate limit when it has one. */
export const recoveryPace = (rateLimitPerSecond: number | null, defaultPerSecond: number) => rateLimitPerSecond ?? defaultPerSecond;

/**
 * Runs recovery jobs: each pass takes the jobs whose next step is due, checks each one's webhook
 * still exists and is active (a job whose webhook is gone fails with the reason), and runs one
 * step of each at its webhook's current pace. The re-sends of a step are due one after the other
 * at that pace, and the job's next step when the last of them is; so however large the window, a
 * recovery sends no faster than its webhook takes, and holds no sending slot while it waits.
 */
export class RecoveryWorker {
  private readonly worker: BackgroundWorker;
  /** When finished jobs were last looked for to be removed (ms since the epoch). */
  private lastRemoval = 0;

  constructor(private readonly options: RecoveryWorkerOptions) {
    this.worker = new BackgroundWorker({ name: 'delivery recovery', logger: options.logger, registry: options.registry, idleMs: options.idleMs, pass: () => this.pass() });
  }

  start(): void {
    this.worker.start();
  }

  /** A job was created: step it now rather than at the next poll. */
  wake(): void {
    this.worker.wake();
  }

  async stop(): Promise<void> {
    await this.worker.stop();
  }

  private async pass(): Promise<PassResult> {
    const { store, batchSize, retentionMs } = this.options;
    const due = await store.due(JOBS_PER_PASS);
    let created = 0;
    for (const job of due) created += await this.stepOne(job.id, job.teamId, job.webhookId, batchSize);
    if (created > 0) this.options.onDeliveriesCreated();
    // Finished jobs are few and removed at the worker's pace, not at every step of a running job.
    const now = Date.now();
    if (now - this.lastRemoval >= this.options.idleMs) {
      this.lastRemoval = now;
      await store.deleteFinishedBefore(retentionMs, REMOVED_PER_PASS);
    }
    if (due.length === JOBS_PER_PASS) return 'more';
    const nextMs = await store.msUntilNextStep();
    return nextMs === undefined ? 'idle' : Math.max(1, Math.ceil(nextMs));
  }

  /** One step of one job; resolves to the re-sends it created. */
  private async stepOne(id: number, teamId: number, webhookId: number, limit: number): Promise<number> {
    const { store, webhooks, logger, defaultPerSecond } = this.options;
    let webhook;
    try {
      webhook = await webhooks.getWebhook(teamId, webhookId);
    } catch (error) {
      if (!(error instanceof DirectoryUnavailableError)) throw error;
      logger.warn({ err: error.cause, recoveryId: id }, 'webhook service unavailable; recovery step postponed');
      await store.postpone(id, DIRECTORY_RETRY_MS);
      return 0;
    }
    if (!webhook) {
      await store.fail(id, 'The webhook was deleted.');
      return 0;
    }
    if (!webhook.active) {
      await store.fail(id, 'The webhook was deactivated; activate it and ask for a new recovery.');
      return 0;
    }
    const step = await store.step(id, limit, recoveryPace(webhook.rateLimitPerSecond, defaultPerSecond));
    if (step?.finished) logger.info({ recoveryId: id, webhookId, teamId }, 'recovery job went through its window');
    return step?.queued ?? 0;
  }
}
