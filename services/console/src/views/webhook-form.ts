// The webhook form, for adding a webhook and for editing one: its URL, events, description, scope
// (organizations and projects), rate limit, operational events and signing options.
import { html, type SafeHtml } from '../html';
import { OPERATIONAL_EVENTS, WEBHOOK_EVENTS, type Webhook } from '../resources';
import { csrfInput, describedBy, field, page, teamPath, type PageContext, type PageOptions } from './layout';

/** What the form holds, as typed: strings and lists of strings until the API has checked them. */
export interface WebhookFormValues {
  url: string;
  events: string[];
  /** Only when adding: an existing webhook's secret is rotated on a page of its own. */
  secret: string;
  active: boolean;
  description: string;
  organization_ids: string[];
  project_ids: string[];
  /** Deliveries per second; empty for no limit. */
  rate_limit_per_second: string;
  operational_events: string[];
  ed25519_signing: boolean;
}

export const EMPTY_WEBHOOK_FORM: WebhookFormValues = {
  url: '',
  events: [...WEBHOOK_EVENTS],
  secret: '',
  active: true,
  description: '',
  organization_ids: [],
  project_ids: [],
  rate_limit_per_second: '',
  operational_events: [],
  ed25519_signing: false,
};

/** The form's values for an existing webhook. */
export const formValuesOf = (webhook: Webhook): WebhookFormValues => ({
  url: webhook.url,
  events: [...webhook.events],
  secret: '',
  active: webhook.active,
  description: webhook.description ?? '',
  organization_ids: webhook.filters.organization_ids.map(String),
  project_ids: webhook.filters.project_ids.map(String),
  rate_limit_per_second: webhook.rate_limit_per_second === null ? '' : String(webhook.rate_limit_per_second),
  operational_events: [...webhook.operational_events],
  ed25519_signing: webhook.ed25519_public_key !== null,
});

/** The team's organizations and their projects, offered as the webhook's scope. */
export interface ScopeChoices {
  organizations: { id: number; name: string; projects: { id: number; name: string }[] }[];
  /** More organizations than the form lists: the others are not offered. */
  truncated: boolean;
}

const OPERATIONAL_EVENT_TEXT: Record<(typeof OPERATIONAL_EVENTS)[number], string> = {
  'webhook.failing': "one of the team's webhooks has failed for a while and will be switched off if it goes on",
  'webhook.disabled': "one of the team's webhooks was switched off after failing too long",
};

const checkbox = (options: { id: string; name: string; value: string; checked: boolean; label: SafeHtml | string }) =>
  html`<div class="check">
    <input type="checkbox" id="${options.id}" name="${options.name}" value="${options.value}"${options.checked ? html` checked` : ''}>
    <label for="${options.id}">${options.label}</label>
  </div>`;

function errorOf(errors: Record<string, string[]>, name: string, id: string) {
  const messages = errors[name];
  return messages ? html`<p class="field-error" id="${id}">${messages.join(' ')}</p>` : '';
}

/**
 * The scope: a checkbox per organization and per project. Ids the webhook holds that are no longer
 * among the choices (a project since deleted) stay listed, checked, so saving keeps or drops them
 * by the person's choice.
 */
function scopeFieldset(values: WebhookFormValues, scope: ScopeChoices, errors: Record<string, string[]>) {
  const knownOrganizations = new Set(scope.organizations.map((organization) => String(organization.id)));
  const knownProjects = new Set(scope.organizations.flatMap((organization) => organization.projects.map((project) => String(project.id))));
  const otherOrganizations = values.organization_ids.filter((id) => !knownOrganizations.has(id));
  const otherProjects = values.project_ids.filter((id) => !knownProjects.has(id));
  const invalid = Boolean(errors.filters);
  return html`<fieldset class="field scope${invalid ? ' has-error' : ''}"${invalid ? html` aria-describedby="webhook-filters-error"` : ''}>
    <legend>Scope</legend>
    <p class="hint">Leave everything unticked to receive the events of every organization and project of the team. Tick organizations, projects or both to receive only their issues' events (when both are ticked, an issue must match both).</p>
    ${
      scope.organizations.length === 0 && otherOrganizations.length === 0 && otherProjects.length === 0
        ? html`<p class="muted">The team has no organizations yet.</p>`
        : html`<ul class="scope-list">
          ${scope.organizations.map(
            (organization) => html`<li>
              ${checkbox({
                id: `scope-organization-${organization.id}`,
                name: 'organization_ids',
                value: String(organization.id),
                checked: values.organization_ids.includes(String(organization.id)),
                label: html`Organization <strong>${organization.name}</strong>`,
              })}
              ${
                organization.projects.length > 0
                  ? html`<ul>
                    ${organization.projects.map(
                      (project) =>
                        html`<li>${checkbox({
                          id: `scope-project-${project.id}`,
                          name: 'project_ids',
                          value: String(project.id),
                          checked: values.project_ids.includes(String(project.id)),
                          label: html`Project ${project.name}`,
                        })}</li>`,
                    )}
                  </ul>`
                  : ''
              }
            </li>`,
          )}
          ${otherOrganizations.map(
            (id) =>
              html`<li>${checkbox({ id: `scope-organization-${id}`, name: 'organization_ids', value: id, checked: true, label: `Organization #${id} (no longer listed)` })}</li>`,
          )}
          ${otherProjects.map(
            (id) => html`<li>${checkbox({ id: `scope-project-${id}`, name: 'project_ids', value: id, checked: true, label: `Project #${id} (no longer listed)` })}</li>`,
          )}
        </ul>`
    }
    ${scope.truncated ? html`<p class="hint">Only the team's first ${scope.organizations.length} organizations are listed.</p>` : ''}
    ${errorOf(errors, 'filters', 'webhook-filters-error')}
  </fieldset>`;
}

/** The fields of the form; `mode` says whether a webhook is being added or edited. */
function webhookFields(values: WebhookFormValues, scope: ScopeChoices, errors: Record<string, string[]>, mode: 'new' | 'edit') {
  const eventErrors = errors.events;
  const operationalErrors = errors.operational_events;
  return html`${field({
    id: 'webhook-url',
    label: 'Payload URL',
    hint: 'An https:// address on the public internet that accepts POST requests.',
    errors: errors.url,
    control: (ids, invalid) =>
      html`<input id="webhook-url" name="url" type="url" inputmode="url" required maxlength="2048" placeholder="https://example.com/hooks/worklane" value="${values.url}"${describedBy(ids, invalid)}>`,
  })}
    ${field({
      id: 'webhook-description',
      label: 'Description (optional)',
      hint: 'What the webhook is for, so the team knows whom to ask. Up to 1,024 characters.',
      errors: errors.description,
      control: (ids, invalid) => html`<textarea id="webhook-description" name="description" rows="2" maxlength="1024"${describedBy(ids, invalid)}>${values.description}</textarea>`,
    })}
    <fieldset class="field${eventErrors ? ' has-error' : ''}"${eventErrors ? html` aria-describedby="webhook-events-error"` : ''}>
      <legend>Events</legend>
      <p class="hint">Choose at least one.</p>
      ${WEBHOOK_EVENTS.map((event) =>
        checkbox({
          id: `event-${event}`,
          name: 'events',
          value: event,
          checked: values.events.includes(event),
          label: html`<code>${event}</code> ${event === 'issue.created' ? 'an issue is created' : 'an issue changes'}`,
        }),
      )}
      ${errorOf(errors, 'events', 'webhook-events-error')}
    </fieldset>
    ${scopeFieldset(values, scope, errors)}
    ${field({
      id: 'webhook-rate-limit',
      label: 'Rate limit (optional)',
      hint: 'At most this many deliveries per second to this endpoint; deliveries above it wait their turn. Leave empty for no limit.',
      errors: errors.rate_limit_per_second,
      control: (ids, invalid) =>
        html`<input id="webhook-rate-limit" name="rate_limit_per_second" type="number" inputmode="numeric" min="1" step="1" value="${values.rate_limit_per_second}"${describedBy(ids, invalid)}>`,
    })}
    <fieldset class="field${operationalErrors ? ' has-error' : ''}"${operationalErrors ? html` aria-describedby="webhook-operational-events-error"` : ''}>
      <legend>Operational events (optional)</legend>
      <p class="hint">Also send this endpoint events about the team's webhooks themselves.</p>
      ${OPERATIONAL_EVENTS.map((event) =>
        checkbox({
          id: `operational-${event}`,
          name: 'operational_events',
          value: event,
          checked: values.operational_events.includes(event),
          label: html`<code>${event}</code> ${OPERATIONAL_EVENT_TEXT[event]}`,
        }),
      )}
      ${errorOf(errors, 'operational_events', 'webhook-operational-events-error')}
    </fieldset>
    ${
      mode === 'new'
        ? field({
            id: 'webhook-secret',
            label: 'Signing secret (optional)',
            hint: html`With a secret, every delivery carries <code>X-Webhook-Signature</code> and <code>webhook-signature</code>, HMAC-SHA256 signatures of the body, so your endpoint can check it came from Worklane. 16 to 255 characters. Copy it before saving: it is stored encrypted and never shown again.`,
            errors: errors.secret,
            control: (ids, invalid) => html`<div class="copy-row">
              <input id="webhook-secret" name="secret" maxlength="255" autocomplete="off" spellcheck="false" value="${values.secret}"${describedBy(ids, invalid)}>
              <button type="button" class="button" data-generate-secret="webhook-secret" hidden>Generate</button>
              <button type="button" class="button" data-copy="webhook-secret" hidden>Copy</button>
            </div>
            <p class="copy-status" role="status" aria-live="polite"></p>`,
          })
        : ''
    }
    <div class="field${errors.ed25519_signing ? ' has-error' : ''}">
      <div class="check">
        <input type="checkbox" id="webhook-ed25519" name="ed25519_signing" value="true"${values.ed25519_signing ? html` checked` : ''}${describedBy(['webhook-ed25519-hint', errors.ed25519_signing ? 'webhook-ed25519-error' : ''].filter(Boolean).join(' '), Boolean(errors.ed25519_signing))}>
        <label for="webhook-ed25519">Also sign with an ed25519 key</label>
      </div>
      <p class="hint" id="webhook-ed25519-hint">Adds a <code>v1a,</code> signature that your endpoint checks with the webhook's public key, without holding a secret. ${mode === 'edit' ? 'Turning it off discards the key; turning it on again makes a new one.' : ''}</p>
      ${errorOf(errors, 'ed25519_signing', 'webhook-ed25519-error')}
    </div>
    <div class="field${errors.active ? ' has-error' : ''}">
      <div class="check">
        <input type="checkbox" id="webhook-active" name="active" value="true"${values.active ? html` checked` : ''}${describedBy(errors.active ? 'webhook-active-error' : undefined, Boolean(errors.active))}>
        <label for="webhook-active">Active: send deliveries as events happen</label>
      </div>
      ${errorOf(errors, 'active', 'webhook-active-error')}
    </div>`;
}

export interface WebhookFormView {
  values: WebhookFormValues;
  scope: ScopeChoices;
  errors?: Record<string, string[]>;
  notice?: PageOptions['notice'];
}

export function newWebhookPage(context: PageContext, view: WebhookFormView) {
  const team = context.team!;
  return page(context, {
    title: `Add webhook · ${team.team_name}`,
    notice: view.notice,
    body: html`<h1>Add a webhook</h1>
      <form method="post" action="${teamPath(team, '/settings/webhooks')}" class="card" novalidate>
        ${csrfInput(context.csrfToken)}
        ${webhookFields(view.values, view.scope, view.errors ?? {}, 'new')}
        <div class="button-row">
          <button type="submit" class="button primary">Add webhook</button>
          <a class="button" href="${teamPath(team, '/settings/webhooks')}">Cancel</a>
        </div>
      </form>`,
  });
}

export function editWebhookPage(context: PageContext, view: WebhookFormView & { webhook: Webhook }) {
  const team = context.team!;
  const detail = teamPath(team, `/settings/webhooks/${view.webhook.id}`);
  return page(context, {
    title: `Edit webhook · ${team.team_name}`,
    notice: view.notice,
    body: html`<p class="breadcrumb"><a href="${detail}">${view.webhook.url}</a></p>
      <h1>Edit the webhook</h1>
      <form method="post" action="${detail}/edit" class="card" novalidate>
        ${csrfInput(context.csrfToken)}
        ${webhookFields(view.values, view.scope, view.errors ?? {}, 'edit')}
        <p class="hint">A changed URL is checked as a new one is. To change the signing secret without a gap, <a href="${detail}/secret">rotate it</a>.</p>
        <div class="button-row">
          <button type="submit" class="button primary">Save changes</button>
          <a class="button" href="${detail}">Cancel</a>
        </div>
      </form>`,
  });
}
