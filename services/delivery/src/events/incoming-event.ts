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

const positiveInteger = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined);

/**
 * Where the event's issue lives, for webhooks scoped to organizations or projects, and which issue
 * it is, for the per-issue order. A field the message lacks stays absent. An issue service of the
 * previous release relaying a newer outbox row leaves `organization_id` inside `data`: read there too.
 */
function scopeOf(event: {
  organization_id?: number;
  data: { issue: { id: number; project_id?: number } } & Record<string, unknown>;
}): Pick<EventHeader, 'organization_id' | 'project_id' | 'issue_id'> {
  const scope: Pick<EventHeader, 'organization_id' | 'project_id' | 'issue_id'> = {};
  const organizationId = positiveInteger(event.organization_id) ?? positiveInteger(event.data.organization_id);
  const projectId = positiveInteger(event.data.issue.project_id);
  const issueId = positiveInteger(event.data.issue.id);
  if (organizationId !== undefined) scope.organization_id = organizationId;
  if (projectId !== undefined) scope.project_id = projectId;
  if (issueId !== undefined) scope.issue_id = issueId;
  return scope;
}

export function readIncomingEvent(subject: string, data: Uint8Array): IncomingEvent {
  const isNotice = subject === ISSUE_EVENTS_DEAD_LETTER_SUBJECT;
  const read = isNotice ? readDeadLetterNotice(data) : readIssueEvent(data);
  if (!read.ok) return { kind: 'invalid', problem: read.problem };
  const { id, type, occurred_at, team_id } = read.event;
  return {
    kind: isNotice ? 'notice' : 'event',
    header: { id, event: type, created_at: occurred_at, team_id, ...scopeOf(read.event) },
    body: Buffer.from(toWebhookBody(read.event)),
    form: read.form,
  };
}
