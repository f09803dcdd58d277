import { createHash } from 'node:crypto';
import { ISSUE_EVENT_NAMES, type IssueEventName } from '@worklane/messaging';

/** UUIDv5 namespace of delivery ids (a fixed random UUID: it only has to differ from other namespaces). */
const DELIVERY_NAMESPACE = Buffer.from('7c0e6d0ab5e94f0e9d1f4a3bb8f0c2d1', 'hex');

/**
 * The id of the delivery of one event to one webhook: a UUIDv5 of both, so processing the same
 * event again (a JetStream redelivery, a second replica) finds the delivery it already made.
 */
export function deliveryId(eventId: string, webhookId: number): string {
  const hash = createHash('sha1').update(DELIVERY_NAMESPACE).update(`${eventId.toLowerCase()}/${webhookId}`).digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
/**
 * Why a delivery failed: 410 Gone, retries used up, its webhook deleted or deactivated before it
 * could be sent, or its event dead-lettered (it could never be published; never attempted).
 */
export type FailureReason = 'gone' | 'exhausted' | 'webhook_deleted' | 'webhook_inactive' | 'dead_lettered';

/** What the fan-out needs from an event; the body itself is delivered as it arrived. */
export interface EventHeader {
  id: string;
  event: IssueEventName;
  created_at: string;
  team_id: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/**
 * Reads the header fields of an event message; undefined when it is not an event this service can
 * deliver (which retrying would not change).
 */
export function parseEventHeader(data: Uint8Array): EventHeader | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { id, event, created_at, team_id } = parsed as Record<string, unknown>;
  if (typeof id !== 'string' || !UUID.test(id)) return undefined;
  if (typeof event !== 'string' || !(ISSUE_EVENT_NAMES as string[]).includes(event)) return undefined;
  if (typeof created_at !== 'string' || !TIMESTAMP.test(created_at)) return undefined;
  if (typeof team_id !== 'number' || !Number.isSafeInteger(team_id) || team_id <= 0) return undefined;
  return { id, event: event as IssueEventName, created_at, team_id };
}
