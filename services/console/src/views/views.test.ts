import { html } from '../html';
import { loginPage } from './auth';
import { timestamp } from './format';
import type { PageContext } from './layout';
import { tokensPage } from './tokens';
import { newWebhookPage, webhookPage } from './webhooks';

const team = { team_id: 7, user_id: 3, role: 'owner', team_name: 'Acme <Ops>' };
const context: PageContext = {
  assets: { css: '/assets/console.css?v=1', js: '/assets/console.js?v=1' },
  csrfToken: 'csrf-token-value',
  memberships: [team, { team_id: 8, user_id: 3, role: 'member', team_name: 'Other' }],
  team,
  section: 'tokens',
};

const token = { id: 11, team_id: 7, user_id: 3, name: 'CI <deploy>', created_at: '2026-01-15T09:00:00.123456Z', last_used_at: '' };

describe('tokens page', () => {
  it('shows a new token once with a copy button and a warning, and escapes names', () => {
    const page = tokensPage(context, { tokens: [token], created: { token, value: 'wl_secretvalue' } }).value;
    expect(page).toContain('value="wl_secretvalue"');
    expect(page).toContain('This is the only time the token is shown');
    expect(page).toContain('data-copy="new-token-value"');
    expect(page).toContain('CI &lt;deploy&gt;');
    expect(page).not.toContain('CI <deploy>');
    expect(page).toContain('Never used');
    expect(page).toContain('<time datetime="2026-01-15T09:00:00.123456Z">15 Jan 2026, 09:00:00 UTC</time>');
  });

  it('puts the CSRF token in every form and asks before deleting', () => {
    const page = tokensPage(context, { tokens: [token] }).value;
    const forms = page.match(/<form /g)!.length;
    expect(page.match(/name="_csrf" value="csrf-token-value"/g)!.length).toBe(forms);
    expect(page).toContain('action="/teams/7/settings/tokens/11/delete"');
    expect(page).toContain('data-confirm="Delete the token “CI &lt;deploy&gt;”?');
    expect(page).not.toContain('wl_');
  });

  it('offers the team switcher and marks the current tab', () => {
    const page = tokensPage(context, { tokens: [] }).value;
    expect(page).toContain('<a href="/teams/8">Other</a>');
    expect(page).toContain('<a href="/teams/7" aria-current="page">Acme &lt;Ops&gt;</a>');
    expect(page).toContain('<a href="/teams/7/settings/tokens" aria-current="page">API tokens</a>');
  });
});

describe('webhook form', () => {
  it('shows each API message beside its field, tied to the control for screen readers', () => {
    const page = newWebhookPage(
      { ...context, section: 'webhooks' },
      {
        values: { url: 'http://example.com', events: [], secret: '', active: true },
        errors: { url: ['The url field must be an https URL.'], events: ['The events field must have at least 1 item.'] },
      },
    ).value;
    expect(page).toMatch(/<input id="webhook-url"[^>]* aria-describedby="webhook-url-hint webhook-url-error" aria-invalid="true">/);
    expect(page).toContain('<p class="field-error" id="webhook-url-error">The url field must be an https URL.</p>');
    expect(page).toContain('<p class="field-error" id="webhook-events-error">The events field must have at least 1 item.</p>');
    expect(page).toContain('value="http://example.com"');
    for (const id of ['webhook-url', 'event-issue.created', 'event-issue.updated', 'webhook-secret', 'webhook-active']) {
      expect(page).toContain(`for="${id}"`);
    }
  });
});

describe('delivery log', () => {
  it("shows each attempt's result, duration and escaped response excerpt", () => {
    const page = webhookPage(
      { ...context, section: 'webhooks' },
      {
        webhook: {
          id: 5,
          team_id: 7,
          url: 'https://example.com/hook',
          events: ['issue.created'],
          active: true,
          created_at: '2026-01-15T09:00:00.000000Z',
          updated_at: '2026-01-15T09:00:00.000000Z',
        },
        log: [
          {
            delivery: {
              id: 'd1',
              webhook_id: 5,
              event: 'issue.created',
              status: 'failed',
              failure_reason: 'exhausted',
              attempt_count: 3,
              next_attempt_at: null,
              redelivery_of: null,
              created_at: '2026-01-15T09:01:00.000000Z',
            },
            attempts: [
              { number: 1, status_code: 500, error: null, duration_ms: 1234, response_body: '<b>oops</b>', attempted_at: '2026-01-15T09:01:00.000000Z' },
              { number: 2, status_code: 200, error: null, duration_ms: 42, response_body: 'ok', attempted_at: '2026-01-15T09:01:05.000000Z' },
              { number: 3, status_code: null, error: 'connection refused', duration_ms: 3, response_body: null, attempted_at: '2026-01-15T09:01:10.000000Z' },
            ],
          },
        ],
      },
    ).value;
    expect(page).toContain('HTTP 500');
    expect(page).toContain('1.2 s');
    expect(page).toContain('42 ms');
    expect(page).toContain('&lt;b&gt;oops&lt;/b&gt;');
    expect(page).toContain('connection refused');
    expect(page).toContain('3 attempts');
    expect(page).toContain('Failed because every retry failed');
    expect(page).toContain('action="/teams/7/settings/webhooks/5/deliveries/d1/redeliver"');
    expect(page).toContain('action="/teams/7/settings/webhooks/5/ping"');
  });

  it('says so when the log cannot be loaded, rather than failing the page', () => {
    const page = webhookPage(
      { ...context, section: 'webhooks' },
      { webhook: { id: 5, team_id: 7, url: 'https://example.com/hook', events: ['issue.created'], active: false, created_at: '', updated_at: '' }, log: undefined },
    ).value;
    expect(page).toContain('The delivery log could not be loaded just now');
    expect(page).toContain('Inactive');
    expect(page).toContain('>Activate<');
  });
});

describe('timestamp', () => {
  it('keeps the exact value and reads it without Date', () => {
    expect(timestamp('2026-12-31T23:59:59.999999Z').value).toBe('<time datetime="2026-12-31T23:59:59.999999Z">31 Dec 2026, 23:59:59 UTC</time>');
    expect(html`${timestamp('')}`.value).toContain('Never');
  });
});

describe('layout', () => {
  it('links to the API reference page from every page, signed in or not', () => {
    const link = '<a href="/api/v1/reference">API reference</a>';
    expect(tokensPage(context, { tokens: [] }).value).toContain(link);
    const signedOut: PageContext = { assets: context.assets };
    expect(loginPage(signedOut, { csrfToken: 'pre-session', signupEnabled: false }).value).toContain(link);
  });
});
