import type { PoolClient } from '@worklane/db';
import { ISSUE_EVENTS_DEAD_LETTER_SUBJECT, JetStreamApiError } from '@worklane/messaging';

/** Why an event can never be published; the label of `worklane_outbox_dead_lettered_total`. */
export type DeadLetterReason = 'payload_too_large' | 'invalid_event';

export interface PermanentFailure {
  reason: DeadLetterReason;
  detail: string;
}

/** Room left for the headers (Nats-Msg-Id, traceparent, tracestate) within the server's max_payload. */
export const HEADER_ALLOWANCE_BYTES = 4_096;

/** JetStream answers that publishing the same message again can never change. */
const PERMANENT_API_CODES = new Map<number, DeadLetterReason>([
  [10054, 'payload_too_large'], // message size exceeds the stream's max_msg_size
]);

/** The fields of an event the relay needs: its team and issue (the order key). */
export interface EventIdentity {
  id: string;
  event: string;
  created_at: string;
  team_id: number;
  issue: { id: number | string } & Record<string, unknown>;
}

/** The event's identity, or undefined when the payload is not an event at all. */
export function readEvent(payload: string): EventIdentity | undefined {
  try {
    const parsed = JSON.parse(payload) as Partial<EventIdentity> | null;
    if (!parsed || typeof parsed !== 'object') return undefined;
    const { id, event, created_at, team_id, issue } = parsed;
    if (typeof id !== 'string' || typeof event !== 'string' || typeof created_at !== 'string') return undefined;
    if (typeof team_id !== 'number' || !issue || typeof issue !== 'object') return undefined;
    if (typeof issue.id !== 'number' && typeof issue.id !== 'string') return undefined;
    return { id, event, created_at, team_id, issue };
  } catch {
    return undefined;
  }
}

/** A failure known before publishing: too large for the server, or not an event. */
export function checkBeforePublish(payload: string, event: EventIdentity | undefined, maxPayload: number): PermanentFailure | undefined {
  const size = Buffer.byteLength(payload);
  if (size > maxPayload - HEADER_ALLOWANCE_BYTES) {
    return { reason: 'payload_too_large', detail: `event of ${size} bytes exceeds the ${maxPayload - HEADER_ALLOWANCE_BYTES} bytes a message may carry` };
  }
  if (!event) return { reason: 'invalid_event', detail: 'the outbox payload is not an issue event' };
  return undefined;
}

/**
 * Whether a publish error is permanent: the client refusing the payload size, or JetStream
 * refusing the message itself. Everything else (no connection, timeouts, no stream, stream full)
 * is transient and retried.
 */
export function permanentFailure(error: unknown): PermanentFailure | undefined {
  if (error instanceof JetStreamApiError) {
    const reason = PERMANENT_API_CODES.get(error.code);
    return reason ? { reason, detail: `JetStream refused the event: ${error.message}` } : undefined;
  }
  if (error instanceof Error && error.name === 'InvalidArgumentError' && /max_payload/.test(error.message)) {
    return { reason: 'payload_too_large', detail: 'the event exceeds the NATS server\'s max_payload' };
  }
  return undefined;
}

const SCALAR_ISSUE_FIELDS = ['id', 'project_id', 'number', 'reference_code'] as const;

/**
 * The notice published in place of a dead-lettered event: the envelope's header fields, the issue's
 * identifying fields only, and `dead_letter`. A few hundred bytes whatever the event held.
 */
export function deadLetterNotice(event: EventIdentity, failure: PermanentFailure, sizeBytes: number): string {
  const issue: Record<string, unknown> = {};
  for (const field of SCALAR_ISSUE_FIELDS) {
    const value = event.issue[field];
    if (typeof value === 'number' || (typeof value === 'string' && value.length <= 64)) issue[field] = value;
  }
  return JSON.stringify({
    id: event.id,
    event: event.event,
    created_at: event.created_at,
    team_id: event.team_id,
    issue,
    dead_letter: { reason: failure.reason, detail: failure.detail, size_bytes: sizeBytes },
  });
}

/**
 * Moves an event to `outbox_dead_letters` and puts its notice in its place in the outbox (same id,
 * same position), or marks it done when it is not an event whose team could be told. Resolves to
 * the notice, to publish now.
 */
export async function moveToDeadLetters(
  client: Pick<PoolClient, 'query'>,
  row: { id: string; payload: string },
  event: EventIdentity | undefined,
  failure: PermanentFailure,
): Promise<string | undefined> {
  const notice = event ? deadLetterNotice(event, failure, Buffer.byteLength(row.payload)) : undefined;
  await client.query({
    name: 'outbox-dead-letter',
    text: `WITH moved AS (
       INSERT INTO outbox_dead_letters (id, subject, payload, trace_context, team_id, reason, detail, created_at)
       SELECT id, subject, payload, trace_context, $2, $3, $4, created_at FROM outbox WHERE id = $1
       ON CONFLICT (id) DO NOTHING
     )
     UPDATE outbox SET
       subject = CASE WHEN $5::text IS NULL THEN subject ELSE $6 END,
       payload = coalesce($5::text, ''),
       published_at = CASE WHEN $5::text IS NULL THEN now() END
     WHERE id = $1`,
    values: [row.id, event?.team_id ?? null, failure.reason, failure.detail, notice ?? null, ISSUE_EVENTS_DEAD_LETTER_SUBJECT],
  });
  return notice;
}
