import { html, type SafeHtml } from '../html';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/;

/**
 * "15 Jan 2026, 09:00:00 UTC" inside a <time> carrying the exact value. Read from the string, so
 * the API's microseconds are kept in the datetime attribute.
 */
export function timestamp(value: string | null | undefined, empty = 'Never'): SafeHtml {
  if (!value) return html`<span class="muted">${empty}</span>`;
  const match = TIMESTAMP.exec(value);
  if (!match) return html`<time>${value}</time>`;
  const [, year, month, day, hour, minute, second] = match;
  const text = `${Number(day)} ${MONTHS[Number(month) - 1] ?? month} ${year}, ${hour}:${minute}:${second} UTC`;
  return html`<time datetime="${value}">${text}</time>`;
}

/** "in_progress" as "In progress". */
export function label(value: string): string {
  const words = value.replace(/[_.]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** "85 ms", "1.2 s". */
export function duration(milliseconds: number | null | undefined): string {
  if (milliseconds === null || milliseconds === undefined) return '—';
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  return `${(milliseconds / 1000).toFixed(1)} s`;
}
