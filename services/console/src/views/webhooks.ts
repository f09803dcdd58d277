import { html, type SafeHtml } from '../html';
import { filterQueryString, LOG_FILTER_NAMES, type LogFilterValues } from '../log-filters';
import { DELIVERY_EVENTS, DELIVERY_STATUSES, type Delivery, type DeliveryAttempt, type Webhook, type WebhookHealth } from '../resources';
import { duration, label, plural, timestamp } from './format';
import { csrfInput, describedBy, field, page, teamPath, type PageContext, type PageOptions } from './layout';
import { recoverSection, type RecoverFormValues } from './recovery';
import type { ScopeChoices } from './webhook-form';
import { healthSection } from './webhook-health';

const webhookPath = (context: PageContext, webhook: Webhook, rest = '') => teamPath(context.team!, `/settings/webhooks/${webhook.id}${rest}`);

const activeBadge = (webhook: Webhook) =>
  webhook.active
    ? html`<span class="badge ok">Active</span>`
    : webhook.disabled_reason
      ? html`<span class="badge bad">Switched off by Worklane</span>`
      : html`<span class="badge muted">Inactive</span>`;

/** Why Worklane switched the webhook off, and what to do about it. */
function disabledNotice(context: PageContext, webhook: Webhook) {
  if (webhook.active || !webhook.disabled_reason) return '';
  return html`<section class="notice error disabled-notice" role="alert" aria-labelledby="disabled-heading">
    <h2 id="disabled-heading">Worklane switched this webhook off</h2>
    <p>${webhook.disabled_at ? html`On ${timestamp(webhook.disabled_at)}: ` : ''}${webhook.disabled_reason}</p>
    <p>Nothing is delivered to it while it is off. Once the endpoint answers again, activate the webhook (that sends nothing by itself), then recover the deliveries that failed meanwhile.</p>
    ${toggleForm(context, webhook, 'detail')}
  </section>`;
}

/** The webhook's scope in words: every project, or the organizations and projects it is limited to. */
function scopeText(webhook: Webhook, scope: ScopeChoices | undefined) {
  const { organization_ids: organizations, project_ids: projects } = webhook.filters;
  if (organizations.length === 0 && projects.length === 0) return html`Every organization and project of the team`;
  const organizationName = new Map(scope?.organizations.map((organization) => [organization.id, organization.name]) ?? []);
  const projectName = new Map(scope?.organizations.flatMap((organization) => organization.projects.map((project) => [project.id, project.name] as const)) ?? []);
  const names = (ids: number[], known: Map<number, string>, what: string) => ids.map((id) => known.get(id) ?? `${what} #${id}`).join(', ');
  return html`${organizations.length > 0 ? html`Organizations: ${names(organizations, organizationName, 'Organization')}` : ''}${organizations.length > 0 && projects.length > 0 ? html`<br>` : ''}${projects.length > 0 ? html`Projects: ${names(projects, projectName, 'Project')}` : ''}`;
}

/** Turns deliveries on or off, stating the new value so a double submit cannot flip it back. */
function toggleForm(context: PageContext, webhook: Webhook, returnTo: 'list' | 'detail') {
  return html`<form method="post" action="${webhookPath(context, webhook, '/active')}">
    ${csrfInput(context.csrfToken)}
    <input type="hidden" name="active" value="${webhook.active ? 'false' : 'true'}">
    <input type="hidden" name="return_to" value="${returnTo}">
    <button type="submit" class="button">${webhook.active ? 'Deactivate' : 'Activate'}<span class="visually-hidden"> webhook ${webhook.url}</span></button>
  </form>`;
}

function deleteForm(context: PageContext, webhook: Webhook) {
  return html`<form method="post" action="${webhookPath(context, webhook, '/delete')}"
    data-confirm="Delete the webhook for ${webhook.url}? Deliveries to it stop at once and its log is no longer shown.">
    ${csrfInput(context.csrfToken)}
    <button type="submit" class="button danger">Delete<span class="visually-hidden"> webhook ${webhook.url}</span></button>
  </form>`;
}

export function webhooksPage(context: PageContext, view: { webhooks: Webhook[]; notice?: PageOptions['notice'] }) {
  const team = context.team!;
  return page(context, {
    title: `Webhooks · ${team.team_name}`,
    notice: view.notice,
    body: html`<div class="heading-row">
        <h1>Webhooks</h1>
        <a class="button primary" href="${teamPath(team, '/settings/webhooks/new')}">Add webhook</a>
      </div>
      <p class="lead">Webhooks send a signed HTTPS POST to your endpoint whenever an issue in this team is created or updated.</p>
      ${
        view.webhooks.length === 0
          ? html`<p class="empty">No webhooks yet. <a href="${teamPath(team, '/settings/webhooks/new')}">Add the first one</a>.</p>`
          : html`<table>
            <thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              ${view.webhooks.map(
                (webhook) => html`<tr>
                  <th scope="row"><a href="${webhookPath(context, webhook)}" class="url">${webhook.url}</a></th>
                  <td>${webhook.events.map((event) => html`<code class="event">${event}</code> `)}</td>
                  <td>${activeBadge(webhook)}</td>
                  <td>${timestamp(webhook.created_at)}</td>
                  <td class="actions">
                    <a class="button" href="${webhookPath(context, webhook)}">Delivery log<span class="visually-hidden"> of ${webhook.url}</span></a>
                    ${toggleForm(context, webhook, 'list')}
                    ${deleteForm(context, webhook)}
                  </td>
                </tr>`,
              )}
            </tbody>
          </table>`
      }`,
  });
}

function attemptOutcome(attempt: DeliveryAttempt): SafeHtml {
  if (attempt.status_code) {
    const ok = attempt.status_code >= 200 && attempt.status_code < 300;
    return html`<span class="badge ${ok ? 'ok' : 'bad'}">HTTP ${attempt.status_code}</span>`;
  }
  return html`<span class="badge bad">${attempt.error || 'No response'}</span>`;
}

function attemptsTable(attempts: DeliveryAttempt[] | undefined) {
  if (attempts === undefined) return html`<p class="muted">The attempts of this delivery could not be loaded just now.</p>`;
  if (attempts.length === 0) return html`<p class="muted">Not attempted yet.</p>`;
  return html`<table class="attempts">
    <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Result</th><th scope="col">Duration</th><th scope="col">Response</th></tr></thead>
    <tbody>
      ${attempts.map(
        (attempt, index) => html`<tr>
          <td>${attempt.number ?? index + 1}</td>
          <td>${timestamp(attempt.attempted_at, '—')}</td>
          <td>${attemptOutcome(attempt)}</td>
          <td>${duration(attempt.duration_ms)}</td>
          <td>${attempt.response_body ? html`<pre class="excerpt">${attempt.response_body}</pre>` : html`<span class="muted">Empty</span>`}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

const deliveryBadge = (status: string) => {
  const kind = status === 'succeeded' ? 'ok' : status === 'failed' ? 'bad' : 'pending';
  return html`<span class="badge ${kind}">${label(status)}</span>`;
};

const FAILURE_REASONS: Record<NonNullable<Delivery['failure_reason']>, string> = {
  gone: 'the endpoint answered 410 Gone, so retrying stopped',
  exhausted: 'every retry failed',
  webhook_deleted: 'the webhook was deleted before it could be sent',
  webhook_inactive: 'the webhook was inactive when it was due',
  dead_lettered: 'its event could never be published, so it was never sent',
};

/** Where the delivery stands, beyond its badge: why it failed, or when it is tried next. */
function deliveryState(delivery: Delivery): SafeHtml | string {
  if (delivery.status === 'failed' && delivery.failure_reason) return ` · Failed because ${FAILURE_REASONS[delivery.failure_reason] ?? delivery.failure_reason}`;
  if (delivery.status === 'pending' && delivery.next_attempt_at) return html` · Next attempt ${timestamp(delivery.next_attempt_at)}`;
  return '';
}

export interface DeliveryLogEntry {
  delivery: Delivery;
  /** Undefined when the detail could not be loaded. */
  attempts: DeliveryAttempt[] | undefined;
}

export interface WebhookPageView {
  webhook: Webhook;
  log: DeliveryLogEntry[] | undefined;
  olderCursor?: string | undefined;
  notice?: PageOptions['notice'];
  /** Names of the organizations and projects the webhook is limited to, when it is. */
  scope?: ScopeChoices | undefined;
  /** The endpoint's health: undefined when it could not be loaded; absent (null) when not asked for. */
  health?: WebhookHealth | undefined | null;
  /** The recover form's values and messages. */
  recover?: { values: RecoverFormValues; errors?: Record<string, string[]> };
  /** The log's filters in force, and messages about those that are not valid. */
  filters?: { values: LogFilterValues; errors: Record<string, string[]> };
}

const STATUS_CHOICES: readonly (readonly [string, string])[] = [['', 'Any state'], ...DELIVERY_STATUSES.map((status) => [status, label(status)] as const)];
const EVENT_CHOICES: readonly (readonly [string, string])[] = [['', 'Any event'], ...DELIVERY_EVENTS.map((event) => [event, event] as const)];

/** The log's filter form: a GET form, so a filtered log is a link to share. */
function logFilterForm(context: PageContext, webhook: Webhook, filters: { values: LogFilterValues; errors: Record<string, string[]> }) {
  const { values, errors } = filters;
  const select = (id: string, name: 'status' | 'event', text: string, choices: readonly (readonly [string, string])[]) =>
    field({
      id,
      label: text,
      errors: errors[name],
      control: (ids, invalid) => html`<select id="${id}" name="${name}"${describedBy(ids, invalid)}>
        ${choices.map(([value, caption]) => html`<option value="${value}"${values[name] === value ? html` selected` : ''}>${caption}</option>`)}
      </select>`,
    });
  const input = (id: string, name: keyof LogFilterValues, text: string, attributes: SafeHtml) =>
    field({
      id,
      label: text,
      errors: errors[name],
      control: (ids, invalid) => html`<input id="${id}" name="${name}" ${attributes} value="${values[name]}"${describedBy(ids, invalid)}>`,
    });
  const filtered = LOG_FILTER_NAMES.some((name) => values[name]);
  return html`<form method="get" action="${webhookPath(context, webhook)}" class="log-filters" role="search" aria-label="Filter the delivery log">
    ${select('log-status', 'status', 'State', STATUS_CHOICES)}
    ${select('log-event', 'event', 'Event', EVENT_CHOICES)}
    ${input('log-issue', 'issue_id', 'Issue id', html`inputmode="numeric" maxlength="16"`)}
    ${input('log-event-id', 'event_id', 'Event id', html`type="search" maxlength="36" spellcheck="false"`)}
    ${input('log-after', 'created_after', 'Created from (UTC)', html`type="datetime-local" step="1"`)}
    ${input('log-before', 'created_before', 'Created before (UTC)', html`type="datetime-local" step="1"`)}
    <div class="button-row">
      <button type="submit" class="button">Filter</button>
      ${filtered ? html`<a class="button link" href="${webhookPath(context, webhook)}#log-heading">Show every delivery</a>` : ''}
    </div>
  </form>`;
}

export function webhookPage(context: PageContext, view: WebhookPageView) {
  const { webhook, filters } = view;
  const team = context.team!;
  const filtered = filters ? LOG_FILTER_NAMES.some((name) => filters.values[name]) : false;
  return page(context, {
    title: `Webhook ${webhook.url} · ${team.team_name}`,
    notice: view.notice,
    body: html`<p class="breadcrumb"><a href="${teamPath(team, '/settings/webhooks')}">Webhooks</a></p>
      <div class="heading-row">
        <h1 class="url">${webhook.url}</h1>
        ${activeBadge(webhook)}
      </div>
      ${disabledNotice(context, webhook)}
      ${webhook.description ? html`<p class="lead webhook-description">${webhook.description}</p>` : ''}
      <dl class="facts">
        <div><dt>Events</dt><dd>${webhook.events.map((event) => html`<code class="event">${event}</code> `)}</dd></div>
        <div><dt>Scope</dt><dd>${scopeText(webhook, view.scope)}</dd></div>
        <div><dt>Rate limit</dt><dd>${webhook.rate_limit_per_second === null ? 'None' : `${plural(webhook.rate_limit_per_second, 'delivery', 'deliveries')} per second`}</dd></div>
        <div><dt>Operational events</dt><dd>${webhook.operational_events.length === 0 ? 'None' : webhook.operational_events.map((event) => html`<code class="event">${event}</code> `)}</dd></div>
        <div><dt>Secret last changed</dt><dd>${timestamp(webhook.secret_rotated_at, 'Never')}</dd></div>
        <div><dt>Created</dt><dd>${timestamp(webhook.created_at)}</dd></div>
        <div><dt>Updated</dt><dd>${timestamp(webhook.updated_at)}</dd></div>
      </dl>
      ${
        webhook.ed25519_public_key
          ? html`<div class="field public-key">
            <label for="webhook-public-key">ed25519 public key (checks the <code>v1a,</code> signatures)</label>
            <div class="copy-row">
              <input id="webhook-public-key" readonly value="${webhook.ed25519_public_key}" spellcheck="false" autocomplete="off">
              <button type="button" class="button" data-copy="webhook-public-key" hidden>Copy</button>
            </div>
            <p class="copy-status" role="status" aria-live="polite"></p>
          </div>`
          : ''
      }
      <div class="button-row">
        <a class="button" href="${webhookPath(context, webhook, '/edit')}">Edit settings</a>
        <a class="button" href="${webhookPath(context, webhook, '/secret')}">Rotate secret</a>
        <form method="post" action="${webhookPath(context, webhook, '/ping')}">
          ${csrfInput(context.csrfToken)}
          <button type="submit" class="button primary">Send ping</button>
        </form>
        ${toggleForm(context, webhook, 'detail')}
        ${deleteForm(context, webhook)}
      </div>
      ${view.health === null ? '' : healthSection(view.health)}
      ${view.recover ? recoverSection(context, webhook, view.recover) : ''}
      <section aria-labelledby="log-heading">
        <h2 id="log-heading">Delivery log</h2>
        ${filters ? logFilterForm(context, webhook, filters) : ''}
        ${
          view.log === undefined
            ? html`<p class="notice error" role="status">The delivery log could not be loaded just now. Reload the page to try again.</p>`
            : view.log.length === 0
              ? filtered
                ? html`<p class="empty">No delivery matches these filters.</p>`
                : html`<p class="empty">Nothing delivered yet. Create or change an issue, or send a ping.</p>`
              : html`<ol class="deliveries">
                ${view.log.map(({ delivery, attempts }) => {
                  const count = delivery.attempt_count ?? attempts?.length ?? 0;
                  return html`<li class="delivery card" id="delivery-${delivery.id}">
                    <div class="delivery-head">
                      <div>
                      <h3><code class="event">${delivery.event}</code> ${deliveryBadge(delivery.status)}</h3>
                      <p class="muted">Delivery <code>${delivery.id}</code>${delivery.redelivery_of ? html` (redelivery of <code>${delivery.redelivery_of}</code>)` : ''}${delivery.recovery_id ? html` (sent again by <a href="${webhookPath(context, webhook, `/recoveries/${delivery.recovery_id}`)}">recovery ${delivery.recovery_id}</a>)` : ''} · ${timestamp(delivery.created_at)} · ${plural(count, 'attempt')}${deliveryState(delivery)}</p>
                      <p class="muted">Event <code>${delivery.event_id}</code> · <a href="${webhookPath(context, webhook, `/deliveries/${encodeURIComponent(String(delivery.id))}`)}">Payload and exchanges<span class="visually-hidden"> of delivery ${delivery.id}</span></a></p>
                      </div>
                      <form method="post" action="${webhookPath(context, webhook, `/deliveries/${encodeURIComponent(String(delivery.id))}/redeliver`)}">
                        ${csrfInput(context.csrfToken)}
                        <button type="submit" class="button">Redeliver<span class="visually-hidden"> delivery ${delivery.id}</span></button>
                      </form>
                    </div>
                    ${attemptsTable(attempts)}
                  </li>`;
                })}
              </ol>
              ${view.olderCursor ? html`<p><a class="button" href="?cursor=${view.olderCursor}${filters ? filterQueryString(filters.values) : ''}">Older deliveries</a></p>` : ''}`
        }
      </section>`,
  });
}
