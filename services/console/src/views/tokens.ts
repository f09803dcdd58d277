import type { ApiToken, CreatedToken } from '../clients/accounts';
import { html } from '../html';
import { timestamp } from './format';
import { csrfInput, describedBy, field, page, teamPath, type PageContext, type PageOptions } from './layout';

export interface TokensView {
  tokens: ApiToken[];
  /** Shown once, right after creation. */
  created?: CreatedToken;
  name?: string;
  errors?: Record<string, string[]>;
  notice?: PageOptions['notice'];
}

function createdPanel(created: CreatedToken) {
  return html`<section class="card reveal" aria-labelledby="new-token-heading">
    <h2 id="new-token-heading">Your new token “${created.token.name}”</h2>
    <p class="warning"><strong>Copy it now.</strong> This is the only time the token is shown; Worklane keeps only a hash of it.</p>
    <div class="copy-row">
      <label for="new-token-value" class="visually-hidden">Token value</label>
      <input id="new-token-value" class="secret-value" readonly value="${created.value}" spellcheck="false" autocomplete="off">
      <button type="button" class="button" data-copy="new-token-value" hidden>Copy</button>
    </div>
    <p class="copy-status" role="status" aria-live="polite"></p>
    <p class="hint">Send it as <code>Authorization: Bearer &lt;token&gt;</code> with every API request.</p>
  </section>`;
}

function tokensTable(context: PageContext, tokens: ApiToken[]) {
  const team = context.team!;
  if (tokens.length === 0) return html`<p class="empty">This team has no API tokens yet.</p>`;
  return html`<table>
    <thead><tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
      ${tokens.map(
        (token) => html`<tr>
          <th scope="row">${token.name}</th>
          <td>${timestamp(token.created_at)}</td>
          <td>${timestamp(token.last_used_at, 'Never used')}</td>
          <td class="actions">
            <form method="post" action="${teamPath(team, `/settings/tokens/${token.id}/delete`)}"
              data-confirm="Delete the token “${token.name}”? Anything using it will be refused by the API at once.">
              ${csrfInput(context.csrfToken)}
              <button type="submit" class="button danger">Delete<span class="visually-hidden"> token ${token.name}</span></button>
            </form>
          </td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

export function tokensPage(context: PageContext, view: TokensView) {
  const team = context.team!;
  return page(context, {
    title: `API tokens · ${team.team_name}`,
    notice: view.notice,
    body: html`<h1>API tokens</h1>
      <p class="lead">Tokens let scripts and services use the Worklane API on behalf of this team. A token works only for this team.</p>
      ${view.created ? createdPanel(view.created) : ''}
      <section class="card" aria-labelledby="create-token-heading">
        <h2 id="create-token-heading">Create a token</h2>
        <form method="post" action="${teamPath(team, '/settings/tokens')}" class="inline-form" novalidate>
          ${csrfInput(context.csrfToken)}
          ${field({
            id: 'token-name',
            label: 'Token name',
            hint: 'Say what will use it, for example “CI deploy” or “Zapier sync”.',
            errors: view.errors?.name,
            control: (ids, invalid) => html`<input id="token-name" name="name" required maxlength="255" value="${view.name ?? ''}"${describedBy(ids, invalid)}>`,
          })}
          <button type="submit" class="button primary">Create token</button>
        </form>
      </section>
      <section aria-labelledby="tokens-heading">
        <h2 id="tokens-heading">Active tokens</h2>
        ${tokensTable(context, view.tokens)}
      </section>`,
  });
}
