import { html } from '../html';
import { readLogFilters } from '../log-filters';
import type { DeliveryDetail, Recovery, Webhook, WebhookHealth } from '../resources';
import { loginPage } from './auth';
import { deliveryPage } from './delivery';
import { timestamp } from './format';
import type { PageContext } from './layout';
import { recoveryPage } from './recovery';
import { tokensPage } from './tokens';
import { EMPTY_WEBHOOK_FORM, editWebhookPage, formValuesOf, newWebhookPage, type ScopeChoices } from './webhook-form';
import { healthSection } from './webhook-health';
import { rotateSecretPage } from './webhook-secret';
import { webhookPage } from './webhooks';

const team = { team_id: 7, user_id: 3, role: 'owner', team_name: 'Acme <Ops>' };
const context: PageContext = {
  assets: { css: '/assets/console.css?v=1', js: '/assets/console.js?v=1' },
  csrfToken: 'csrf-token-value',
  memberships: [team, { team_id: 8, user_id: 3, role: 'member', team_name: 'Other' }],
  team,
  section: 'tokens',
};

/** A webhook as the API returns it, with `fields` over the defaults. */
const webhookOf = (fields: Partial<Webhook> = {}): Webhook => ({
  id: 5,
  team_id: 7,
  url: 'https://example.com/hook',
  events: ['issue.created'],
  active: true,
  created_at: '2026-01-15T09:00:00.000000Z',
  updated_at: '2026-01-15T09:00:00.000000Z',
  description: null,
  filters: { organization_ids: [], project_ids: [] },
  rate_limit_per_second: null,
  operational_events: [],
  disabled_reason: null,
  disabled_at: null,
  ed25519_public_key: null,
  secret_rotated_at: null,
  ...fields,
});

const noScope: ScopeChoices = { organizations: [], truncated: false };

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
        values: { ...EMPTY_WEBHOOK_FORM, url: 'http://example.com', events: [] },
        scope: noScope,
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

describe('webhook settings', () => {
  const scope: ScopeChoices = {
    organizations: [
      {
        id: 1,
        name: 'Acme <Inc>',
        projects: [
          { id: 10, name: 'Backend' },
          { id: 11, name: 'Web' },
        ],
      },
      { id: 2, name: 'Labs', projects: [] },
    ],
    truncated: false,
  };

  it('offers every organization and project as the scope, ticks the ones the webhook has, and keeps ids no longer listed', () => {
    const webhook = webhookOf({ filters: { organization_ids: [2], project_ids: [11, 99] }, rate_limit_per_second: 5, operational_events: ['webhook.disabled'] });
    const page = editWebhookPage({ ...context, section: 'webhooks' }, { webhook, values: formValuesOf(webhook), scope }).value;
    expect(page).toContain('action="/teams/7/settings/webhooks/5/edit"');
    expect(page).toMatch(/<input type="checkbox" id="scope-organization-1" name="organization_ids" value="1">/);
    expect(page).toMatch(/<input type="checkbox" id="scope-organization-2" name="organization_ids" value="2" checked>/);
    expect(page).toMatch(/<input type="checkbox" id="scope-project-11" name="project_ids" value="11" checked>/);
    expect(page).toContain('Project #99 (no longer listed)');
    expect(page).toContain('Acme &lt;Inc&gt;');
    expect(page).toMatch(/name="rate_limit_per_second" type="number"[^>]* value="5"/);
    expect(page).toMatch(/id="operational-webhook.disabled" name="operational_events" value="webhook.disabled" checked/);
    expect(page).toMatch(/id="operational-webhook.failing" name="operational_events" value="webhook.failing">/);
    // An existing webhook's secret is rotated on its own page, never edited here.
    expect(page).not.toContain('name="secret"');
    expect(page).toContain('href="/teams/7/settings/webhooks/5/secret"');
    expect(page.match(/name="_csrf" value="csrf-token-value"/g)!.length).toBe(page.match(/<form /g)!.length);
  });

  it('shows a rotated secret once, with no form that would rotate it again', () => {
    const page = rotateSecretPage(
      { ...context, section: 'webhooks' },
      { webhook: webhookOf(), values: { secret: '', overlap_seconds: '86400' }, rotated: { secret: 'whsec_<new>', overlapSeconds: 86_400 } },
    ).value;
    expect(page).toContain('value="whsec_&lt;new&gt;"');
    expect(page).toContain('This is the only time the secret is shown');
    expect(page).toContain('1 day from now every delivery is signed with both');
    expect(page).not.toContain('action="/teams/7/settings/webhooks/5/secret"');
    const form = rotateSecretPage({ ...context, section: 'webhooks' }, { webhook: webhookOf(), values: { secret: '', overlap_seconds: '86400' } }).value;
    expect(form).toContain('action="/teams/7/settings/webhooks/5/secret"');
    expect(form).toMatch(/<option value="86400" selected>24 hours/);
    expect(form).not.toContain('whsec_');
  });

  it('says why Worklane switched a webhook off, escaped, with a way to switch it on again', () => {
    const webhook = webhookOf({ active: false, disabled_reason: 'Every attempt failed for 5 days <b>(HTTP 503)</b>', disabled_at: '2026-01-20T09:00:00.000000Z' });
    const page = webhookPage({ ...context, section: 'webhooks' }, { webhook, log: [] }).value;
    expect(page).toContain('Worklane switched this webhook off');
    expect(page).toContain('Every attempt failed for 5 days &lt;b&gt;(HTTP 503)&lt;/b&gt;');
    expect(page).toContain('20 Jan 2026, 09:00:00 UTC');
    expect(page).toContain('Switched off by Worklane');
    expect(page).toMatch(/<input type="hidden" name="active" value="true">/);
    expect(webhookPage({ ...context, section: 'webhooks' }, { webhook: webhookOf({ active: false }), log: [] }).value).not.toContain('Worklane switched this webhook off');
  });

  it("names the webhook's scope, rate limit, operational events and public key", () => {
    const webhook = webhookOf({
      description: 'Support <desk>',
      filters: { organization_ids: [], project_ids: [10, 12] },
      rate_limit_per_second: 1,
      operational_events: ['webhook.failing'],
      ed25519_public_key: `whpk_${'A'.repeat(43)}=`,
    });
    const page = webhookPage({ ...context, section: 'webhooks' }, { webhook, log: [], scope }).value;
    expect(page).toContain('Support &lt;desk&gt;');
    expect(page).toContain('Projects: Backend, Project #12');
    expect(page).toContain('1 delivery per second');
    expect(page).toContain('<code class="event">webhook.failing</code>');
    expect(page).toContain(`value="whpk_${'A'.repeat(43)}="`);
    expect(webhookPage({ ...context, section: 'webhooks' }, { webhook: webhookOf(), log: [] }).value).toContain('Every organization and project of the team');
  });
});

describe('endpoint health, recovery and the payload view', () => {
  const health: WebhookHealth = {
    webhook_id: 5,
    computed_at: '2026-01-15T09:00:00.000000Z',
    last_hour: { attempts: 4, successes: 1, failures: 3, response_time_ms: { p50: 84, p95: 1_310 } },
    last_day: { attempts: 0, successes: 0, failures: 0, response_time_ms: { p50: null, p95: null } },
    circuit_breaker: { state: 'open', changed_at: '2026-01-15T08:58:00.000000Z', retry_at: '2026-01-15T09:00:30.000000Z' },
    last_success_at: null,
    last_error: { at: '2026-01-15T08:59:00.000000Z', status_code: 503, message: 'HTTP 503 <gateway>' },
    failing_since: '2026-01-15T08:00:00.000000Z',
    failing_notice_sent_at: null,
    disable_at: '2026-01-20T08:00:00.000000Z',
  };

  it('shows attempts, success rate and response times per window, the breaker, the last error and the switch-off date', () => {
    const section = healthSection(health).value;
    expect(section).toContain('<th scope="row">Last hour</th>');
    expect(section).toContain('25%');
    expect(section).toContain('84 ms');
    expect(section).toContain('1.3 s');
    expect(section).toContain('Open: deliveries wait');
    expect(section).toContain('HTTP 503 &lt;gateway&gt;');
    expect(section).toContain('None on record');
    expect(section).toContain('switches the webhook off on <time datetime="2026-01-20T08:00:00.000000Z">');
    expect(healthSection(undefined).value).toContain('could not be loaded just now');
  });

  const recovery: Recovery = {
    id: 9,
    webhook_id: 5,
    status: 'running',
    since: '2026-01-15T08:00:00.000000Z',
    until: '2026-01-15T09:00:00.000000Z',
    pace_per_second: 10,
    found: 40,
    queued: 25,
    skipped: 2,
    done: 20,
    delivered: 19,
    failed: 1,
    error: null,
    created_at: '2026-01-15T09:01:00.000000Z',
    started_at: '2026-01-15T09:01:00.100000Z',
    finished_at: null,
    updated_at: '2026-01-15T09:01:03.000000Z',
  };

  it("follows a running recovery's progress with a page that reloads itself, and stops reloading once it is done", () => {
    const running = recoveryPage({ ...context, section: 'webhooks' }, { webhook: webhookOf(), recovery }).value;
    expect(running).toContain('<meta http-equiv="refresh" content="2">');
    expect(running).toContain('22 of 40 events done');
    expect(running).toContain('<progress id="recovery-progress" max="40" value="22">');
    expect(running).toContain('10 deliveries per second');
    const done = recoveryPage(
      { ...context, section: 'webhooks' },
      { webhook: webhookOf(), recovery: { ...recovery, status: 'succeeded', finished_at: '2026-01-15T09:01:05.000000Z' } },
    ).value;
    expect(done).not.toContain('http-equiv="refresh"');
    expect(done).toContain('Some re-sends failed again');
  });

  it('offers the recover form with the window it was given', () => {
    const page = webhookPage(
      { ...context, section: 'webhooks' },
      { webhook: webhookOf(), log: [], health, recover: { values: { since: '2026-01-15T08:00:00', until: '' }, errors: { until: ['Enter a date.'] } } },
    ).value;
    expect(page).toContain('action="/teams/7/settings/webhooks/5/recover"');
    expect(page).toMatch(/<input id="recover-since" name="since" type="datetime-local" step="1" required value="2026-01-15T08:00:00"/);
    expect(page).toContain('<p class="field-error" id="recover-until-error">Enter a date.</p>');
  });

  it('keeps the log filters in the form and in the link to older deliveries', () => {
    const filters = readLogFilters({ status: 'failed', event_id: 'not-a-uuid' });
    const page = webhookPage({ ...context, section: 'webhooks' }, { webhook: webhookOf(), log: [], olderCursor: 'abc', filters }).value;
    expect(page).toContain('<option value="failed" selected>Failed</option>');
    expect(page).toContain('value="not-a-uuid"');
    expect(page).toContain('id="log-event-id-error"');
    expect(page).toContain('No delivery matches these filters.');
    expect(page).toContain('Show every delivery');
  });

  it('shows the payload as sent, and each attempt with the headers sent and received, escaped', () => {
    const delivery: DeliveryDetail = {
      id: '0b7c1a52-7c1e-5a57-9d0b-0f0d3b1e8a11',
      webhook_id: 5,
      event: 'issue.updated',
      event_id: '5a1f3c2e-8b7d-5e4f-9a0b-1c2d3e4f5a6b',
      status: 'succeeded',
      failure_reason: null,
      attempt_count: 2,
      next_attempt_at: null,
      redelivery_of: null,
      recovery_id: 9,
      created_at: '2026-01-15T09:00:00.000000Z',
      updated_at: '2026-01-15T09:00:05.000000Z',
      completed_at: '2026-01-15T09:00:05.000000Z',
      payload: { id: 'x' },
      request_body: '{"id":"x","issue":{"title":"<script>"}}',
      attempts: [
        {
          number: 1,
          attempted_at: '2026-01-15T09:00:00.000000Z',
          status_code: 503,
          error: null,
          duration_ms: 12,
          response_body: '<h1>down</h1>',
          request_headers: { 'webhook-signature': 'v1,abc', 'content-type': 'application/json' },
          response_headers: { 'set-cookie': '[redacted]', server: 'nginx <1.2>' },
        },
        {
          number: 2,
          attempted_at: '2026-01-15T09:00:05.000000Z',
          status_code: null,
          error: 'timeout',
          duration_ms: 15_000,
          response_body: null,
          request_headers: null,
          response_headers: null,
        },
      ],
    } as DeliveryDetail;
    const page = deliveryPage({ ...context, section: 'webhooks' }, { webhook: webhookOf(), delivery }).value;
    expect(page).toContain('&quot;title&quot;: &quot;&lt;script&gt;&quot;');
    expect(page).not.toContain('<script>"');
    expect(page).toContain('<code>webhook-signature</code>');
    expect(page).toContain('nginx &lt;1.2&gt;');
    expect(page).toContain('[redacted]');
    expect(page).toContain('&lt;h1&gt;down&lt;/h1&gt;');
    expect(page).toContain('No response was received.');
    expect(page).toContain('href="/teams/7/settings/webhooks/5/recoveries/9"');
    expect(page).toContain('href="/teams/7/settings/webhooks/5?event_id=5a1f3c2e-8b7d-5e4f-9a0b-1c2d3e4f5a6b"');
    expect(page).toContain('action="/teams/7/settings/webhooks/5/deliveries/0b7c1a52-7c1e-5a57-9d0b-0f0d3b1e8a11/redeliver"');
  });
});

describe('delivery log', () => {
  it("shows each attempt's result, duration and escaped response excerpt", () => {
    const page = webhookPage(
      { ...context, section: 'webhooks' },
      {
        webhook: webhookOf(),
        log: [
          {
            delivery: {
              id: 'd1',
              webhook_id: 5,
              event: 'issue.created',
              event_id: '5a1f3c2e-8b7d-5e4f-9a0b-1c2d3e4f5a6b',
              recovery_id: null,
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
    const page = webhookPage({ ...context, section: 'webhooks' }, { webhook: webhookOf({ active: false, created_at: '', updated_at: '' }), log: undefined }).value;
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
