// A webhook's health, as the webhook page shows it: how its endpoint answered over the last hour
// and day, its circuit breaker, its last error, and a failing streak with when it will be switched off.
import { html } from '../html';
import type { WebhookHealth } from '../resources';
import { duration, timestamp } from './format';

const BREAKER_TEXT: Record<WebhookHealth['circuit_breaker']['state'], string> = {
  closed: 'Closed: deliveries flow',
  open: 'Open: deliveries wait',
  half_open: 'Half open: the next attempt is a probe',
};

const successRate = (window: WebhookHealth['last_hour']) => (window.attempts === 0 ? '—' : `${Math.round((window.successes / window.attempts) * 1000) / 10}%`);

/** The health section; `health` is undefined when it could not be loaded. */
export function healthSection(health: WebhookHealth | undefined) {
  if (!health) {
    return html`<section aria-labelledby="health-heading"><h2 id="health-heading">Health</h2>
      <p class="muted">The endpoint's health could not be loaded just now. Reload the page to try again.</p></section>`;
  }
  const breaker = health.circuit_breaker;
  const row = (name: string, window: WebhookHealth['last_hour']) => html`<tr>
    <th scope="row">${name}</th>
    <td>${window.attempts}</td>
    <td>${window.successes}</td>
    <td>${window.failures}</td>
    <td>${successRate(window)}</td>
    <td>${duration(window.response_time_ms.p50)}</td>
    <td>${duration(window.response_time_ms.p95)}</td>
  </tr>`;
  return html`<section aria-labelledby="health-heading" class="health">
    <h2 id="health-heading">Health</h2>
    ${
      health.failing_since
        ? html`<p class="notice error" role="status">Every attempt has failed since ${timestamp(health.failing_since)}.${
            health.disable_at ? html` If that goes on, Worklane switches the webhook off on ${timestamp(health.disable_at)}.` : ''
          }</p>`
        : ''
    }
    <table class="health-table">
      <thead><tr><th scope="col">Window</th><th scope="col">Attempts</th><th scope="col">Succeeded</th><th scope="col">Failed</th><th scope="col">Success rate</th><th scope="col">Response p50</th><th scope="col">Response p95</th></tr></thead>
      <tbody>${row('Last hour', health.last_hour)}${row('Last 24 hours', health.last_day)}</tbody>
    </table>
    <dl class="facts">
      <div><dt>Circuit breaker</dt><dd><span class="badge ${breaker.state === 'closed' ? 'ok' : breaker.state === 'open' ? 'bad' : 'pending'}">${BREAKER_TEXT[breaker.state]}</span>${
        breaker.state === 'open' && breaker.retry_at ? html` until ${timestamp(breaker.retry_at)}` : ''
      }</dd></div>
      <div><dt>Last success</dt><dd>${timestamp(health.last_success_at, 'None on record')}</dd></div>
      <div><dt>Last error</dt><dd>${health.last_error ? html`${health.last_error.message} · ${timestamp(health.last_error.at)}` : html`<span class="muted">None</span>`}</dd></div>
    </dl>
    <p class="hint">As of ${timestamp(health.computed_at)}.</p>
  </section>`;
}
