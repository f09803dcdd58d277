import { createHash } from 'node:crypto';
import type { IssueEventName } from '@worklane/messaging';

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

/**
 * What the fan-out needs from an event: its envelope's id, type, time, team and organization, and
 * its issue's id and project (read in events/incoming-event.ts). The body delivered is the event's
 * webhook body.
 */
export interface EventHeader {
  id: string;
  event: IssueEventName;
  created_at: string;
  team_id: number;
  /** The issue's organization; absent from events published before the envelope carried it. */
  organization_id?: number;
  /** The issue's project, from the event's issue. */
  project_id?: number;
  /** The event's issue: its deliveries to one webhook are attempted in commit order. */
  issue_id?: number;
}
