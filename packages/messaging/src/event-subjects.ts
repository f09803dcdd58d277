// The names and subjects of issue events, without the NATS client: a thread that only names an
// event (the issue API's create, a delivery service's configuration) imports this module alone
// (`@worklane/messaging/event-subjects`) and does not load the client.

/**
 * Event types (the envelope's `type`, the webhook body's `event`), and the NATS subject each is
 * published on. The messages themselves are defined in events/ (docs/events.md).
 */
export const ISSUE_EVENT_SUBJECTS = {
  'issue.created': 'issues.created',
  'issue.updated': 'issues.updated',
} as const;

export type IssueEventName = keyof typeof ISSUE_EVENT_SUBJECTS;
export const ISSUE_EVENT_NAMES = Object.keys(ISSUE_EVENT_SUBJECTS) as IssueEventName[];

/**
 * The subject of a dead-letter notice: a small message the outbox relay publishes in place of an
 * event that can never be published (too large for the bus, malformed). It carries the event's id,
 * name, team and issue, and `dead_letter: { reason, ... }`, so the delivery service records it in
 * the team's delivery log instead of sending it.
 */
export const ISSUE_EVENTS_DEAD_LETTER_SUBJECT = 'issues.dead_lettered';
