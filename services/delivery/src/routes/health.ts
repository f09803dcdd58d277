import type { Router } from 'express';
import type { WebhookHealth } from '@worklane/api-contract';
import { idParam, notFound, requireTeam, resource } from '@worklane/http';
import type { WebhookDirectory } from '../clients/webhooks';
import type { HealthRow, HealthStore, WindowTotals } from '../health/health-store';
import { percentile } from '../health/latency';

export interface HealthRouteDeps {
  webhooks: Pick<WebhookDirectory, 'getWebhook'>;
  health: HealthStore;
  /** WEBHOOK_DISABLE_AFTER_MS: how long a streak of failures lasts before the webhook is switched off. */
  disableAfterMs: number;
}

const windowOf = (totals: WindowTotals): WebhookHealth['last_hour'] => ({
  attempts: totals.attempts,
  successes: totals.successes,
  failures: totals.failures,
  response_time_ms: { p50: percentile(totals.buckets, 0.5), p95: percentile(totals.buckets, 0.95) },
});

/** The breaker's state now: an open breaker whose wait is over lets a probe through. */
function breakerOf(row: HealthRow | undefined, nowMs: number): WebhookHealth['circuit_breaker'] {
  if (!row) return { state: 'closed', changed_at: null, retry_at: null };
  if (row.breaker_state === 'closed') return { state: 'closed', changed_at: row.breaker_changed_at, retry_at: null };
  const waiting = row.breaker_retry_at_ms !== null && row.breaker_retry_at_ms > nowMs;
  return { state: waiting ? 'open' : 'half_open', changed_at: row.breaker_changed_at, retry_at: waiting ? row.breaker_retry_at : null };
}

/** GET .../webhooks/{webhook}/health: the webhook must be the team's (404 otherwise, another team's included). */
export function healthRoutes(router: Router, deps: HealthRouteDeps): void {
  resource(router, '/api/v1/teams/:team/webhooks/:webhook/health', {
    get: async (req, res) => {
      const { teamId } = requireTeam(req);
      const webhookId = idParam(req, 'webhook');
      if (!(await deps.webhooks.getWebhook(teamId, webhookId))) throw notFound();
      const [row, windows] = await Promise.all([deps.health.find(webhookId, undefined, deps.disableAfterMs), deps.health.windows(webhookId)]);
      const body: WebhookHealth = {
        webhook_id: webhookId,
        computed_at: windows.now,
        last_hour: windowOf(windows.lastHour),
        last_day: windowOf(windows.lastDay),
        circuit_breaker: breakerOf(row, windows.nowMs),
        last_success_at: row?.last_success_at ?? null,
        last_error: row?.last_failure_at != null ? { at: row.last_failure_at, status_code: row.last_error_status, message: row.last_error_message ?? 'no answer' } : null,
        failing_since: row?.failing_since ?? null,
        failing_notice_sent_at: row?.failing_notice_at ?? null,
        disable_at: row?.disable_at ?? null,
      };
      res.json(body);
    },
  });
}
