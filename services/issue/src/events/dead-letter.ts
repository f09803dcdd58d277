import type { PoolClient } from '@worklane/db';
import { ISSUE_EVENTS_DEAD_LETTER_SUBJECT, JetStreamApiError, deadLetterNotice, encodeEvent, readIssueEvent, type IssueEvent } from '@worklane/messaging';

/** Why an event can never be published; the label of `worklane_outbox_dead_lettered_total`. */
export type DeadLetterReason = 'payload_too_large' | 'invalid_event';

export interface PermanentFailure {
  reason: DeadLetterReason;
  detail: string;
  /** The size of what was refused, when known. */
  sizeBytes?: number;
}

/** Room left for the headers (Nats-Msg-Id, traceparent, tracestate) within the server's max_payload. */
export const HEADER_ALLOWANCE_BYTES = 4_096;

/** JetStream answers that publishing the same message again can never change. */
const PERMANENT_API_CODES = new Map<number, DeadLetterReason>([
  [10054, 'payload_too_large'], // message size exceeds the stream's max_msg_size
]);

/** An outbox row ready to publish: the event and the message (its envelope) to put on the bus. */
export interface Prepared {
  event: IssueEvent;
  message: string;
}

/**
 * Reads an outbox row and builds its message, or says why it can never be published: too large
 * for the server (the message, or the row when it is not an event), or not an event at all. The
 * event is returned with a failure when it was read, so that its team can be told.
 */
export function prepareMessage(payload: string, maxPayload: number): Prepared | { failure: PermanentFailure; event?: IssueEvent } {
  const read = readIssueEvent(payload);
  const message = read.ok ? encodeEvent(read.event) : payload;
  const size = Buffer.byteLength(message);
  const limit = maxPayload - HEADER_ALLOWANCE_BYTES;
  const event = read.ok ? read.event : undefined;
  if (size > limit) return { failure: { reason: 'payload_too_large', detail: `event of ${size} bytes exceeds the ${limit} bytes a message may carry`, sizeBytes: size }, event };
  if (!read.ok) return { failure: { reason: 'invalid_event', detail: `the outbox payload is not an issue event: ${read.problem}`, sizeBytes: size } };
  return { event: read.event, message };
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
    return { reason: 'payload_too_large', detail: "the event exceeds the NATS server's max_payload" };
  }
  return undefined;
}

/**
 * Moves an event to `outbox_dead_letters` and puts its notice (built by packages/messaging: the
 * event's envelope fields, the issue's identifying fields, why) in its place in the outbox (same
 * id, same position), or marks it done when it is not an event whose team could be told. Resolves
 * to the notice's message, to publish now.
 */
export async function moveToDeadLetters(
  client: Pick<PoolClient, 'query'>,
  row: { id: string; payload: string },
  event: IssueEvent | undefined,
  failure: PermanentFailure,
): Promise<string | undefined> {
  const deadLetter = { reason: failure.reason, detail: failure.detail, size_bytes: failure.sizeBytes ?? Buffer.byteLength(row.payload) };
  const notice = event ? encodeEvent(deadLetterNotice(event, deadLetter)) : undefined;
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
