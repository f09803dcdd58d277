import { timestamp, withTransaction, type Pool } from '@worklane/db';
import { BackgroundWorker, promClient, type Logger, type PassResult, type Registry } from '@worklane/observability';
import type { WebhookDirectory } from '../clients/webhooks';
import type { HealthStore } from './health-store';
import {
  createOperationalDeliveries,
  webhookDisabledBody,
  webhookFailingBody,
  type FailingStreak,
  type OperationalEventBody,
  type OperationalEventName,
  type WebhookSummary,
} from './operational-events';

export interface AutoDisableOptions {
  pool: Pool;
  health: HealthStore;
  webhooks: Pick<WebhookDirectory, 'getWebhook' | 'listSubscriptions' | 'disableWebhook'>;
  logger: Logger;
  /** After this long of only failures, `webhook.failing` is sent (once per streak). */
  noticeAfterMs: number;
  /** After this long of only failures, the webhook is switched off and `webhook.disabled` sent. */
  disableAfterMs: number;
  /** How often failing streaks are looked at. */
  intervalMs: number;
  /** Health rows of webhooks without any attempt for this long are removed. */
  idleMs: number;
  /** Operational deliveries were stored: send them now. */
  onDeliveriesCreated: () => void;
  registry?: Registry;
}

/** Failing webhooks handled per pass; a full pass goes again at once. */
const BATCH = 50;
/** Rows pruned per statement, at most once a minute. */
const PRUNE_BATCH = 5_000;
const PRUNE_EVERY_MS = 60_000;

interface Candidate {
  webhookId: number;
  teamId: number;
  /** The streak, as stored (the exact timestamp text identifies it). */
  since: string;
  disableDue: boolean;
  disableAt: string;
  now: string;
}

/** `5 days`, `1 day 2 hours`, `30 seconds`: how long a streak lasted, in words for the reason. */
export function durationInWords(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1_000, 'second'],
  ];
  const parts: string[] = [];
  let left = ms;
  for (const [size, name] of units) {
    const count = Math.floor(left / size);
    if (count > 0 && parts.length < 2) parts.push(`${count} ${name}${count === 1 ? '' : 's'}`);
    left -= count * size;
  }
  return parts.length > 0 ? parts.join(' ') : `${ms} ms`;
}

/**
 * Looks after webhooks whose every attempt fails. A streak starts at the first failed attempt after
 * a successful one (or the webhook's first attempt) and ends at the next success. Once a streak has
 * lasted `noticeAfterMs`, the team's webhooks that opted in receive `webhook.failing`, once per
 * streak; once it has lasted `disableAfterMs`, the webhook service switches the webhook off with a
 * reason, the streak ends, and they receive `webhook.disabled`. Every replica runs one: a webhook
 * handled by two at once is disabled once (the call is idempotent) and its events, whose ids
 * derive from the streak, are stored once.
 */
export class AutoDisable {
  private readonly worker: BackgroundWorker;
  private lastPrune = 0;
  private readonly sent: promClient.Counter<'event'>;
  private readonly disabled: promClient.Counter;

  constructor(private readonly options: AutoDisableOptions) {
    this.worker = new BackgroundWorker({ name: 'webhook auto-disable', logger: options.logger, registry: options.registry, idleMs: options.intervalMs, pass: () => this.pass() });
    const registers = options.registry ? [options.registry] : [];
    this.sent = new promClient.Counter({
      name: 'worklane_delivery_operational_events_total',
      help: 'Operational events about failing webhooks (webhook.failing, webhook.disabled), counted once per event, whatever the number of webhooks it goes to',
      labelNames: ['event'],
      registers,
    });
    this.disabled = new promClient.Counter({
      name: 'worklane_delivery_webhooks_auto_disabled_total',
      help: 'Webhooks switched off because every attempt failed for too long',
      registers,
    });
  }

  start(): void {
    this.worker.start();
  }

  async stop(): Promise<void> {
    await this.worker.stop();
  }

  /** One look at every failing webhook that is due (exposed for tests and tools). */
  async pass(): Promise<PassResult> {
    await this.pruneNowAndThen();
    const due = await this.findDue();
    let failure: unknown;
    for (const candidate of due) {
      try {
        await this.handle(candidate);
      } catch (error) {
        this.options.logger.warn({ err: error, webhookId: candidate.webhookId, teamId: candidate.teamId }, 'handling a failing webhook failed; it is tried again');
        failure ??= error;
      }
    }
    // A webhook that could not be handled is retried after the worker's backoff, not at once.
    if (failure) throw failure;
    return due.length === BATCH ? 'more' : 'idle';
  }

  private async pruneNowAndThen(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await this.options.health.prune(this.options.idleMs, PRUNE_BATCH);
  }

  private async findDue(): Promise<Candidate[]> {
    const { noticeAfterMs, disableAfterMs } = this.options;
    const { rows } = await this.options.pool.query<Omit<Candidate, 'webhookId' | 'teamId'> & { webhook_id: string; team_id: string }>({
      name: 'webhook-health-due',
      text: `SELECT webhook_id, team_id, ${timestamp('failing_since', 'since')},
              failing_since <= now() - make_interval(secs => $2) AS "disableDue",
              ${timestamp('(failing_since + make_interval(secs => $2))', '"disableAt"')}, ${timestamp('now()', 'now')}
       FROM webhook_health
       WHERE failing_since IS NOT NULL AND failing_since <= now() - make_interval(secs => least($1, $2))
         AND (failing_since <= now() - make_interval(secs => $2) OR failing_notice_for IS NULL OR failing_notice_for < failing_since)
       ORDER BY failing_since
       LIMIT $3`,
      values: [noticeAfterMs / 1000, disableAfterMs / 1000, BATCH],
    });
    return rows.map(({ webhook_id, team_id, ...row }) => ({ ...row, webhookId: Number(webhook_id), teamId: Number(team_id) }));
  }

  private async handle(candidate: Candidate): Promise<void> {
    const { webhooks, pool } = this.options;
    const target = await webhooks.getWebhook(candidate.teamId, candidate.webhookId);
    if (!target) {
      await pool.query('DELETE FROM webhook_health WHERE webhook_id = $1', [candidate.webhookId]);
      return;
    }
    if (!target.active) {
      // Switched off by its team (or already by auto-disable): its deliveries stop, and so does the streak.
      await pool.query(
        `UPDATE webhook_health SET failing_since = NULL, failing_notice_for = NULL, streak_reset_at = now(), updated_at = now()
         WHERE webhook_id = $1 AND failing_since = $2::timestamptz`,
        [candidate.webhookId, candidate.since],
      );
      return;
    }
    const summary: WebhookSummary = { id: target.id, url: target.url, events: target.events, active: target.active };
    if (candidate.disableDue) await this.disable(candidate, summary);
    else await this.warn(candidate, summary);
  }

  private async warn(candidate: Candidate, webhook: WebhookSummary): Promise<void> {
    const streak = await this.streakOf(candidate);
    if (!streak) return;
    const body = webhookFailingBody({ createdAt: candidate.now, teamId: candidate.teamId, webhook, streak, disableAt: candidate.disableAt });
    const recipients = await this.recipients(candidate.teamId, 'webhook.failing');
    const sent = await withTransaction(this.options.pool, async (client) => {
      // Only if the streak is still the one read, and no other replica has sent its notice since.
      const { rowCount } = await client.query(
        `UPDATE webhook_health SET failing_notice_for = failing_since, failing_notice_at = now(), updated_at = now()
         WHERE webhook_id = $1 AND failing_since = $2::timestamptz AND (failing_notice_for IS NULL OR failing_notice_for < failing_since)`,
        [candidate.webhookId, candidate.since],
      );
      if (!rowCount) return false;
      await createOperationalDeliveries(client, body, recipients);
      return true;
    });
    if (!sent) return;
    this.sent.inc({ event: 'webhook.failing' });
    this.options.logger.info(
      { webhookId: candidate.webhookId, teamId: candidate.teamId, failingSince: candidate.since, recipients: recipients.length },
      'webhook keeps failing; team notified',
    );
    if (recipients.length > 0) this.options.onDeliveriesCreated();
  }

  private async disable(candidate: Candidate, webhook: WebhookSummary): Promise<void> {
    const streak = await this.streakOf(candidate);
    if (!streak) return;
    const reason = `Switched off automatically: every delivery attempt failed for ${durationInWords(this.options.disableAfterMs)} (since ${candidate.since}); last error: ${streak.last_error?.message ?? 'none recorded'}.`;
    const disabled = await this.options.webhooks.disableWebhook(candidate.teamId, candidate.webhookId, reason);
    if (!disabled) {
      await this.options.pool.query('DELETE FROM webhook_health WHERE webhook_id = $1', [candidate.webhookId]);
      return;
    }
    const body: OperationalEventBody = webhookDisabledBody({
      createdAt: candidate.now,
      teamId: candidate.teamId,
      webhook: { ...webhook, url: disabled.url, events: disabled.events },
      streak,
      reason,
    });
    // The webhook is off now: the event goes out even if an attempt in flight ended the streak meanwhile.
    const recipients = await this.recipients(candidate.teamId, 'webhook.disabled');
    await withTransaction(this.options.pool, async (client) => {
      await client.query(
        `UPDATE webhook_health SET failing_since = NULL, failing_notice_for = NULL, streak_reset_at = now(), disabled_at = now(), updated_at = now()
         WHERE webhook_id = $1`,
        [candidate.webhookId],
      );
      await createOperationalDeliveries(client, body, recipients);
    });
    this.disabled.inc();
    this.sent.inc({ event: 'webhook.disabled' });
    this.options.logger.warn(
      { webhookId: candidate.webhookId, teamId: candidate.teamId, failingSince: candidate.since, recipients: recipients.length },
      'webhook failed for too long; switched off',
    );
    if (recipients.length > 0) this.options.onDeliveriesCreated();
  }

  /** The streak as the events describe it; undefined when it ended since it was read. */
  private async streakOf(candidate: Candidate): Promise<FailingStreak | undefined> {
    const row = await this.options.health.find(candidate.webhookId);
    if (!row || row.failing_since !== candidate.since) return undefined;
    return {
      since: row.failing_since,
      last_success_at: row.last_success_at,
      last_error: row.last_failure_at === null ? null : { at: row.last_failure_at, status_code: row.last_error_status, message: row.last_error_message ?? 'no answer' },
    };
  }

  /** The team's active webhooks that opted in to the event. */
  private async recipients(teamId: number, event: OperationalEventName): Promise<number[]> {
    const subscribers = await this.options.webhooks.listSubscriptions(teamId, event);
    return subscribers.filter((subscriber) => subscriber.active).map((subscriber) => subscriber.id);
  }
}
