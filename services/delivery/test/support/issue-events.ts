import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@worklane/messaging';
import type { EventFanOut } from '../../src/data/deliveries';

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

/**
 * Fan-outs of `count` issue.created events of `teamId`, one per issue from `firstIssueId` on, each
 * to every webhook of `webhookIds` and due at once, as the consumer hands them to the store.
 */
export function issueFanOuts(teamId: number, webhookIds: number[], count: number, firstIssueId: number): EventFanOut[] {
  return Array.from({ length: count }, (_, index) => {
    const issueId = firstIssueId + index;
    return {
      event: { id: randomUUID(), event: 'issue.created', created_at: '2026-11-24T10:00:00.000000Z', team_id: teamId, issue_id: issueId },
      body: Buffer.from(JSON.stringify({ issue: issueId })),
      traceContext: {},
      webhookIds,
      firstDelayMs: 0,
      streamSequence: issueId,
    };
  });
}
