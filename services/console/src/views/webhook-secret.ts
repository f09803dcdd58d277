// Rotating a webhook's signing secret: the form (a new secret or a generated one, and how long the
// old one keeps signing beside it) and, once rotated, the new secret, shown this once.
import { html } from '../html';
import type { Webhook } from '../resources';
import { timestamp } from './format';
import { csrfInput, describedBy, field, page, teamPath, type PageContext, type PageOptions } from './layout';

export interface RotateSecretValues {
  secret: string;
  /** Seconds, as the form sent it. */
  overlap_seconds: string;
}

/** How long the replaced secret may keep signing: the choices the form offers (the API's default first). */
export const OVERLAP_CHOICES = {
  default: 86_400,
  options: [
    { seconds: 86_400, text: '24 hours (recommended)' },
    { seconds: 3_600, text: '1 hour' },
    { seconds: 259_200, text: '3 days' },
    { seconds: 604_800, text: '7 days' },
    { seconds: 0, text: 'Not at all: replace it at once' },
  ],
} as const;

const overlapText = (seconds: number) =>
  seconds === 0
    ? 'The old secret stopped signing at once.'
    : `Until ${seconds >= 86_400 ? `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}` : `${Math.round(seconds / 3_600)} hour${seconds === 3_600 ? '' : 's'}`} from now every delivery is signed with both the new and the old secret, so your endpoint may switch whenever it is ready.`;

export interface RotateSecretView {
  webhook: Webhook;
  values: RotateSecretValues;
  errors?: Record<string, string[]>;
  notice?: PageOptions['notice'];
  /** Right after a rotation: the new secret, shown once. */
  rotated?: { secret: string; overlapSeconds: number };
}

export function rotateSecretPage(context: PageContext, view: RotateSecretView) {
  const team = context.team!;
  const { webhook } = view;
  const errors = view.errors ?? {};
  const detail = teamPath(team, `/settings/webhooks/${webhook.id}`);
  return page(context, {
    title: `Rotate secret · ${team.team_name}`,
    notice: view.notice,
    body: html`<p class="breadcrumb"><a href="${detail}">${webhook.url}</a></p>
      <h1>Rotate the signing secret</h1>
      ${
        view.rotated
          ? html`<section class="card reveal" aria-labelledby="new-secret-heading">
            <h2 id="new-secret-heading">The new signing secret</h2>
            <p class="warning"><strong>Copy it now.</strong> This is the only time the secret is shown; Worklane stores it encrypted and never shows it again.</p>
            <div class="copy-row">
              <label for="new-secret-value" class="visually-hidden">New signing secret</label>
              <input id="new-secret-value" class="secret-value" readonly value="${view.rotated.secret}" spellcheck="false" autocomplete="off">
              <button type="button" class="button" data-copy="new-secret-value" hidden>Copy</button>
            </div>
            <p class="copy-status" role="status" aria-live="polite"></p>
            <p>${overlapText(view.rotated.overlapSeconds)}</p>
            <p><a class="button" href="${detail}">Back to the webhook</a></p>
          </section>`
          : html`<form method="post" action="${detail}/secret" class="card" novalidate>
        ${csrfInput(context.csrfToken)}
        <p>Last changed: ${timestamp(webhook.secret_rotated_at, 'never')}. During the overlap every delivery carries a <code>webhook-signature</code> entry for the new secret and one for each old secret still valid; <code>X-Webhook-Signature</code> uses the new one.</p>
        ${field({
          id: 'rotate-secret',
          label: 'New secret (optional)',
          hint: 'Leave empty to have Worklane generate one. 16 to 255 characters.',
          errors: errors.secret,
          control: (ids, invalid) => html`<div class="copy-row">
              <input id="rotate-secret" name="secret" maxlength="255" autocomplete="off" spellcheck="false" value="${view.values.secret}"${describedBy(ids, invalid)}>
              <button type="button" class="button" data-generate-secret="rotate-secret" hidden>Generate</button>
            </div>
            <p class="copy-status" role="status" aria-live="polite"></p>`,
        })}
        ${field({
          id: 'rotate-overlap',
          label: 'Keep the old secret signing for',
          errors: errors.overlap_seconds,
          control: (ids, invalid) => html`<select id="rotate-overlap" name="overlap_seconds"${describedBy(ids, invalid)}>
            ${OVERLAP_CHOICES.options.map(
              (choice) => html`<option value="${choice.seconds}"${view.values.overlap_seconds === String(choice.seconds) ? html` selected` : ''}>${choice.text}</option>`,
            )}
          </select>`,
        })}
        <div class="button-row">
          <button type="submit" class="button primary">Rotate secret</button>
          <a class="button" href="${detail}">Cancel</a>
        </div>
      </form>`
      }`,
  });
}
