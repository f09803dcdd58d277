// The delivery log's filters, from the page's query string to the API's: each value is checked
// here, at the edge, so a hand-edited link shows a message beside its field instead of an error page.
import { DELIVERY_EVENTS, DELIVERY_STATUSES, type DeliveryEvent, type DeliveryStatus } from './resources';

/** The filters as the form holds them (strings, as typed). */
export interface LogFilterValues {
  status: string;
  event: string;
  issue_id: string;
  event_id: string;
  /** `datetime-local` values, read as UTC. */
  created_after: string;
  created_before: string;
}

export interface LogQuery {
  status?: DeliveryStatus;
  event?: DeliveryEvent;
  issue_id?: number;
  event_id?: string;
  created_after?: string;
  created_before?: string;
}

export const LOG_FILTER_NAMES = ['status', 'event', 'issue_id', 'event_id', 'created_after', 'created_before'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?$/;

/**
 * A `datetime-local` value (no zone: UTC on these pages) as RFC 3339, or undefined when it is not
 * one or names a day that does not exist.
 */
export function utcInstant(value: string): string | undefined {
  const match = LOCAL_TIME.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = '00'] = match;
  const text = `${year}-${month}-${day}T${hour}:${minute}:${second}Z`;
  const parsed = new Date(text);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 19) !== text.slice(0, 19)) return undefined;
  return text;
}

/** An instant as a `datetime-local` value in UTC (to the second). */
export const localValue = (instant: Date) => instant.toISOString().slice(0, 19);

const single = (value: unknown) => (typeof value === 'string' ? value.trim().slice(0, 200) : '');

/** Reads the filters of a log page's query string: the values for the form, the API's query, and messages. */
export function readLogFilters(query: Record<string, unknown>): { values: LogFilterValues; query: LogQuery; errors: Record<string, string[]> } {
  const values = Object.fromEntries(LOG_FILTER_NAMES.map((name) => [name, single(query[name])])) as unknown as LogFilterValues;
  const api: LogQuery = {};
  const errors: Record<string, string[]> = {};
  if (values.status) {
    if ((DELIVERY_STATUSES as readonly string[]).includes(values.status)) api.status = values.status as DeliveryStatus;
    else errors.status = ['Choose a state from the list.'];
  }
  if (values.event) {
    if ((DELIVERY_EVENTS as readonly string[]).includes(values.event)) api.event = values.event as DeliveryEvent;
    else errors.event = ['Choose an event from the list.'];
  }
  if (values.issue_id) {
    if (/^[1-9]\d{0,15}$/.test(values.issue_id)) api.issue_id = Number(values.issue_id);
    else errors.issue_id = ['An issue id is a whole number, as the API returns it.'];
  }
  if (values.event_id) {
    if (UUID.test(values.event_id)) api.event_id = values.event_id.toLowerCase();
    else errors.event_id = ['An event id looks like 5a1f3c2e-8b7d-5e4f-9a0b-1c2d3e4f5a6b: the id field of the webhook body.'];
  }
  for (const name of ['created_after', 'created_before'] as const) {
    if (!values[name]) continue;
    const instant = utcInstant(values[name]);
    if (instant) api[name] = instant;
    else errors[name] = ['Enter a date and time.'];
  }
  return { values, query: api, errors };
}

/** The query string of the filters in force (for the next page's link), with a leading `&`, or ''. */
export function filterQueryString(values: LogFilterValues): string {
  const params = new URLSearchParams();
  for (const name of LOG_FILTER_NAMES) if (values[name]) params.set(name, values[name]);
  const text = params.toString();
  return text ? `&${text}` : '';
}
