import { ISSUE_EVENTS_DEAD_LETTER_SUBJECT, readDeadLetterNotice, readIssueEvent, toWebhookBody } from '@worklane/messaging';
import type { EventHeader } from '../domain/delivery';

/**
 * A message of ISSUE_EVENTS as the consumer handles it: an event to fan out, a dead-letter notice
 * to record, or a message no retry can make valid. Messages are read only through the schemas of
 * packages/messaging, which also read the flat form an earlier release published (docs/events.md).
 */
export type IncomingEvent =
  | {
      kind: 'event' | 'notice';
      header: EventHeader;
      /** What receivers get (or, for a notice, what the delivery log shows): the webhook body. */
      body: Buffer;
      /** `flat` for a message in the format published before the envelope. */
      form: 'envelope' | 'flat';
    }
  | { kind: 'invalid'; problem: string };

export function readIncomingEvent(subject: string, data: Uint8Array): IncomingEvent {
  const isNotice = subject === ISSUE_EVENTS_DEAD_LETTER_SUBJECT;
  const read = isNotice ? readDeadLetterNotice(data) : readIssueEvent(data);
  if (!read.ok) return { kind: 'invalid', problem: read.problem };
  const { id, type, occurred_at, team_id } = read.event;
  return {
    kind: isNotice ? 'notice' : 'event',
    header: { id, event: type, created_at: occurred_at, team_id },
    body: Buffer.from(toWebhookBody(read.event)),
    form: read.form,
  };
}
