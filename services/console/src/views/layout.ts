import type { Membership } from '../clients/accounts';
import { CSRF_FIELD } from '../csrf';
import { html, type Interpolation, type SafeHtml } from '../html';

/** Paths of the static files with a content hash, so browsers may cache them for good. */
export interface Assets {
  css: string;
  js: string;
}

/** Who is looking at the page, and the team the page is about when there is one. */
export interface PageContext {
  assets: Assets;
  csrfToken?: string;
  memberships?: Membership[];
  team?: Membership;
  /** Which tab of the team navigation is current. */
  section?: 'overview' | 'tokens' | 'webhooks';
}

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** A confirmation or warning shown above the content, announced to screen readers. */
  notice?: { kind: 'success' | 'error' | 'info'; text: string } | undefined;
  /** Reload the page after this many seconds (a job's progress), without any script. */
  refreshSeconds?: number | undefined;
}

export const csrfInput = (token: string | undefined) => html`<input type="hidden" name="${CSRF_FIELD}" value="${token ?? ''}">`;

export const teamPath = (team: { team_id: number }, rest = '') => `/teams/${team.team_id}${rest}`;

/** The API reference page the gateway serves (rendered from its OpenAPI document), beside the console. */
export const API_REFERENCE_PATH = '/api/v1/reference';

function teamSwitcher(context: PageContext): SafeHtml | undefined {
  const { team, memberships } = context;
  if (!team || !memberships) return undefined;
  if (memberships.length < 2) return html`<span class="team-name">${team.team_name}</span>`;
  return html`<details class="team-switcher">
    <summary><span class="visually-hidden">Current team: </span>${team.team_name}</summary>
    <nav aria-label="Switch team"><ul>
      ${memberships.map(
        (membership) => html`<li><a href="${teamPath(membership)}"${membership.team_id === team.team_id ? html` aria-current="page"` : ''}>${membership.team_name}</a></li>`,
      )}
    </ul></nav>
  </details>`;
}

function teamNavigation(context: PageContext): SafeHtml | undefined {
  const { team, section } = context;
  if (!team) return undefined;
  const tab = (key: PageContext['section'], href: string, text: string) => html`<li><a href="${href}"${section === key ? html` aria-current="page"` : ''}>${text}</a></li>`;
  return html`<nav class="tabs" aria-label="Team">
    <ul>
      ${tab('overview', teamPath(team), 'Overview')}
      ${tab('tokens', teamPath(team, '/settings/tokens'), 'API tokens')}
      ${tab('webhooks', teamPath(team, '/settings/webhooks'), 'Webhooks')}
    </ul>
  </nav>`;
}

export function page(context: PageContext, options: PageOptions): SafeHtml {
  const signedIn = context.csrfToken !== undefined && context.memberships !== undefined;
  const notice = options.notice;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${
  options.refreshSeconds
    ? html`<meta http-equiv="refresh" content="${options.refreshSeconds}">
`
    : ''
}<title>${options.title} · Worklane</title>
<link rel="stylesheet" href="${context.assets.css}">
<script src="${context.assets.js}" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <div class="bar">
    <a class="brand" href="/">Worklane</a>
    ${teamSwitcher(context)}
    ${signedIn ? html`<form class="sign-out" method="post" action="/logout">${csrfInput(context.csrfToken)}<button type="submit" class="button link">Sign out</button></form>` : ''}
  </div>
  ${teamNavigation(context)}
</header>
<main id="main" tabindex="-1">
  ${notice ? html`<div class="notice ${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}">${notice.text}</div>` : ''}
  ${options.body}
</main>
<footer class="site-footer">
  <a href="${API_REFERENCE_PATH}">API reference</a>
</footer>
</body>
</html>`;
}

/** A labelled control with its hint and the API's messages for it, linked for screen readers. */
export function field(options: {
  id: string;
  label: string;
  control: (describedBy: string | undefined, invalid: boolean) => SafeHtml;
  hint?: Interpolation;
  errors?: string[] | undefined;
}): SafeHtml {
  const errors = options.errors ?? [];
  const hintId = options.hint ? `${options.id}-hint` : undefined;
  const errorId = errors.length > 0 ? `${options.id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return html`<div class="field${errors.length > 0 ? ' has-error' : ''}">
    <label for="${options.id}">${options.label}</label>
    ${options.hint ? html`<p class="hint" id="${hintId}">${options.hint}</p>` : ''}
    ${options.control(describedBy, errors.length > 0)}
    ${errors.length > 0 ? html`<p class="field-error" id="${errorId}">${errors.join(' ')}</p>` : ''}
  </div>`;
}

/** Attributes that tie a control to its hint and error text. */
export const describedBy = (ids: string | undefined, invalid: boolean) => html`${ids ? html` aria-describedby="${ids}"` : ''}${invalid ? html` aria-invalid="true"` : ''}`;
