// One delivery: the body every attempt sent (exactly the text its signatures cover) and each
// attempt's exchange: the request headers sent, the response status and headers received, and the
// first bytes of the response. Credentials in headers are redacted by the delivery service.
import { html, type SafeHtml } from '../html';
import type { DeliveryDetail, Webhook } from '../resources';
import { duration, label, plural, timestamp } from './format';
import { csrfInput, page, teamPath, type PageContext, type PageOptions } from './layout';

/** The body, indented when it is JSON (it always is), else as sent. */
function readableBody(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function headersTable(headers: Record<string, string> | null | undefined, caption: string, none: string): SafeHtml {
  if (!headers || Object.keys(headers).length === 0) return html`<p class="muted">${none}</p>`;
  return html`<table class="headers">
    <caption>${caption}</caption>
    <tbody>${Object.entries(headers).map(([name, value]) => html`<tr><th scope="row"><code>${name}</code></th><td><code class="header-value">${value}</code></td></tr>`)}</tbody>
  </table>`;
}

function attemptSection(attempt: DeliveryDetail['attempts'][number], index: number) {
  const number = attempt.number ?? index + 1;
  const outcome = attempt.status_code
    ? html`<span class="badge ${attempt.status_code >= 200 && attempt.status_code < 300 ? 'ok' : 'bad'}">HTTP ${attempt.status_code}</span>`
    : html`<span class="badge bad">${attempt.error || 'No response'}</span>`;
  return html`<section class="card attempt" aria-labelledby="attempt-${number}-heading">
    <h3 id="attempt-${number}-heading">Attempt ${number} ${outcome}</h3>
    <p class="muted">${timestamp(attempt.attempted_at, '—')} · ${duration(attempt.duration_ms)}${attempt.error && attempt.status_code ? ` · ${attempt.error}` : ''}</p>
    <div class="exchange">
      <div>${headersTable(attempt.request_headers, 'Request headers sent', 'The request headers of this attempt were not kept.')}</div>
      <div>
        ${headersTable(attempt.response_headers, 'Response headers received', attempt.status_code ? 'No response headers were kept.' : 'No response was received.')}
        <h4>Response body (first bytes)</h4>
        ${attempt.response_body ? html`<pre class="excerpt">${attempt.response_body}</pre>` : html`<p class="muted">Empty</p>`}
      </div>
    </div>
  </section>`;
}

export function deliveryPage(context: PageContext, view: { webhook: Webhook; delivery: DeliveryDetail; notice?: PageOptions['notice'] }) {
  const team = context.team!;
  const { webhook, delivery } = view;
  const webhookPath = teamPath(team, `/settings/webhooks/${webhook.id}`);
  return page(context, {
    title: `Delivery ${delivery.id} · ${team.team_name}`,
    notice: view.notice,
    body: html`<p class="breadcrumb"><a href="${webhookPath}">${webhook.url}</a></p>
      <div class="heading-row">
        <h1><code class="event">${delivery.event}</code> delivery</h1>
        <span class="badge ${delivery.status === 'succeeded' ? 'ok' : delivery.status === 'failed' ? 'bad' : 'pending'}">${label(delivery.status)}</span>
      </div>
      <dl class="facts">
        <div><dt>Delivery</dt><dd><code>${delivery.id}</code></dd></div>
        <div><dt>Event id</dt><dd><code>${delivery.event_id}</code></dd></div>
        <div><dt>Created</dt><dd>${timestamp(delivery.created_at)}</dd></div>
        <div><dt>Attempts</dt><dd>${plural(delivery.attempt_count, 'attempt')}</dd></div>
        ${delivery.redelivery_of ? html`<div><dt>Redelivery of</dt><dd><a href="${webhookPath}/deliveries/${delivery.redelivery_of}"><code>${delivery.redelivery_of}</code></a></dd></div>` : ''}
        ${delivery.recovery_id ? html`<div><dt>Sent again by</dt><dd><a href="${webhookPath}/recoveries/${delivery.recovery_id}">Recovery ${delivery.recovery_id}</a></dd></div>` : ''}
      </dl>
      <div class="button-row">
        <a class="button" href="${webhookPath}?event_id=${delivery.event_id}">Every delivery of this event</a>
        <form method="post" action="${webhookPath}/deliveries/${delivery.id}/redeliver">
          ${csrfInput(context.csrfToken)}
          <button type="submit" class="button">Redeliver</button>
        </form>
      </div>
      <section aria-labelledby="payload-heading">
        <h2 id="payload-heading">Payload</h2>
        <p class="hint">The body every attempt sent; the signatures cover it byte for byte as sent, not as indented here.</p>
        <pre class="code payload">${readableBody(delivery.request_body)}</pre>
      </section>
      <section aria-labelledby="attempts-heading">
        <h2 id="attempts-heading">Attempts</h2>
        ${delivery.attempts.length === 0 ? html`<p class="muted">Not attempted yet.</p>` : delivery.attempts.map((attempt, index) => attemptSection(attempt, index))}
      </section>`,
  });
}
