import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@worklane/messaging';

/**
 * Publishes an issue.created event of `teamId` for issue `issueId` to ISSUE_EVENTS, in the flat form
 * the consumer still reads, with its id as Nats-Msg-Id; resolves to the event id. `prefix` names the
 * issue's reference code.
 */
export async function publishIssueCreated(connection: NatsConnection, teamId: number, issueId: number, prefix: string): Promise<string> {
  const eventId = randomUUID();
  const at = '2026-11-24T10:00:00.000000Z';
  const message = JSON.stringify({
    id: eventId,
    event: 'issue.created',
    created_at: at,
    team_id: teamId,
    issue: {
      id: issueId,
      project_id: 1,
      number: issueId,
      reference_code: `${prefix}-${issueId}`,
      title: `Issue ${issueId}`,
      description: null,
      url: null,
      type: 'task',
      status: 'triage',
      priority: 'none',
      assigned_to: null,
      estimated_date: null,
      created_by: 1,
      created_at: at,
      updated_at: at,
    },
  });
  await jetstream(connection).publish('issues.created', message, { msgID: eventId });
  return eventId;
}
