// Recovering a webhook's failed deliveries: the form on the webhook page (a window in UTC) and the
// job's page, which follows its progress until it is done.
import { html } from '../html';
import type { Recovery, Webhook } from '../resources';
import { label, plural, timestamp } from './format';
import { csrfInput, describedBy, field, page, teamPath, type PageContext, type PageOptions } from './layout';

/** The window as the form holds it: `datetime-local` values, read as UTC. */
export interface RecoverFormValues {
  since: string;
  until: string;
}

/** How often the page of a job that is still running reloads itself (no script needed). */
export const RECOVERY_REFRESH_SECONDS = 2;

const FINISHED = new Set<Recovery['status']>(['succeeded', 'failed']);

export function recoverSection(context: PageContext, webhook: Webhook, view: { values: RecoverFormValues; errors?: Record<string, string[]> }) {
  const errors = view.errors ?? {};
  const action = teamPath(context.team!, `/settings/webhooks/${webhook.id}/recover`);
  return html`<section aria-labelledby="recover-heading" class="card recover">
    <h2 id="recover-heading">Recover failed deliveries</h2>
    <p class="hint">Sends again, once each and with its own event id, every event whose delivery to this webhook failed in the window, at the webhook's rate limit. Your endpoint can drop an event it already has by its id. The webhook must be active.</p>
    <form method="post" action="${action}" class="inline-form" novalidate>
      ${csrfInput(context.csrfToken)}
      ${field({
        id: 'recover-since',
        label: 'From (UTC)',
        errors: errors.since,
        control: (ids, invalid) => html`<input id="recover-since" name="since" type="datetime-local" step="1" required value="${view.values.since}"${describedBy(ids, invalid)}>`,
      })}
      ${field({
        id: 'recover-until',
        label: 'Until (UTC, optional)',
        hint: 'Empty: until now.',
        errors: errors.until,
        control: (ids, invalid) => html`<input id="recover-until" name="until" type="datetime-local" step="1" value="${view.values.until}"${describedBy(ids, invalid)}>`,
      })}
      <button type="submit" class="button primary">Recover</button>
    </form>
  </section>`;
}

const statusBadge = (status: Recovery['status']) => html`<span class="badge ${status === 'succeeded' ? 'ok' : status === 'failed' ? 'bad' : 'pending'}">${label(status)}</span>`;

export function recoveryPage(context: PageContext, view: { webhook: Webhook; recovery: Recovery; notice?: PageOptions['notice'] }) {
  const team = context.team!;
  const { webhook, recovery } = view;
  const detail = teamPath(team, `/settings/webhooks/${webhook.id}`);
  const finished = FINISHED.has(recovery.status);
  const sent = recovery.queued;
  return page(context, {
    title: `Recovery ${recovery.id} · ${team.team_name}`,
    notice: view.notice,
    refreshSeconds: finished ? undefined : RECOVERY_REFRESH_SECONDS,
    body: html`<p class="breadcrumb"><a href="${detail}">${webhook.url}</a></p>
      <div class="heading-row">
        <h1>Recovery ${recovery.id}</h1>
        ${statusBadge(recovery.status)}
      </div>
      <p>Failed deliveries created from ${timestamp(recovery.since)} until ${timestamp(recovery.until)}, sent again at ${plural(recovery.pace_per_second, 'delivery', 'deliveries')} per second.</p>
      <section class="card" aria-labelledby="progress-heading">
        <h2 id="progress-heading">Progress</h2>
        <p>
          <label for="recovery-progress">${
            recovery.found === 0 ? 'Nothing to send again' : `${recovery.done + recovery.skipped} of ${plural(recovery.found, 'event')} done`
          }</label>
          <progress id="recovery-progress" max="${Math.max(1, recovery.found)}" value="${recovery.found === 0 ? 1 : recovery.done + recovery.skipped}"></progress>
        </p>
        <dl class="facts">
          <div><dt>Events found</dt><dd>${recovery.found}</dd></div>
          <div><dt>Sent again</dt><dd>${sent}</dd></div>
          <div><dt>Skipped</dt><dd>${recovery.skipped}</dd></div>
          <div><dt>Delivered</dt><dd>${recovery.delivered}</dd></div>
          <div><dt>Failed again</dt><dd>${recovery.failed}</dd></div>
          <div><dt>Started</dt><dd>${timestamp(recovery.started_at, 'Not yet')}</dd></div>
          <div><dt>Finished</dt><dd>${timestamp(recovery.finished_at, 'Not yet')}</dd></div>
        </dl>
        ${recovery.error ? html`<p class="notice error" role="alert">${recovery.error}</p>` : ''}
        ${
          finished
            ? html`<p>${recovery.failed > 0 ? 'Some re-sends failed again: once the endpoint answers, recover the same window again.' : 'Done.'} Skipped events had reached the endpoint, or were on their way, already.</p>`
            : html`<p class="muted" role="status">This page refreshes every ${RECOVERY_REFRESH_SECONDS} seconds while the job runs.</p>`
        }
      </section>
      <p><a class="button" href="${detail}">Back to the webhook</a></p>`,
  });
}
