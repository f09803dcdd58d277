import { randomUUID } from 'node:crypto';
import { ISSUE_EVENT_SUBJECTS, type IssueEventEnvelope, type IssueEventName } from '@worklane/messaging';
import type { Issue, IssueChanges } from './issue';

/** One event ready for the outbox: its id, NATS subject and the exact JSON receivers will get. */
export interface OutboxEvent {
  id: string;
  subject: string;
  payload: string;
}

/**
 * The event for a change the caller has just written. Its `created_at` is the issue's own
 * timestamp from the same transaction, so the two always agree.
 */
export function issueEvent(event: IssueEventName, teamId: number, issue: Issue, changes?: IssueChanges): OutboxEvent {
  const envelope: IssueEventEnvelope = {
    id: randomUUID(),
    event,
    created_at: event === 'issue.created' ? issue.created_at : issue.updated_at,
    team_id: teamId,
    issue: { ...issue },
    ...(changes ? { changes: changes as IssueEventEnvelope['changes'] } : {}),
  };
  return { id: envelope.id, subject: ISSUE_EVENT_SUBJECTS[event], payload: JSON.stringify(envelope) };
}
