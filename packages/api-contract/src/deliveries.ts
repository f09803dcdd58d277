import { z } from 'zod';
import { MAX_ID, id, timestamp, uuid } from './common';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Why a delivery failed: 410 Gone, retries used up, its webhook deleted or deactivated before it
 * could be sent, or its event dead-lettered (it could never be published; never attempted).
 */
export const FAILURE_REASONS = ['gone', 'exhausted', 'webhook_deleted', 'webhook_inactive', 'dead_lettered'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/**
 * The events a delivery can carry: the issue events, the `ping` a client asks for, and the
 * operational events about a failing webhook (sent to the webhooks that opt in to them).
 */
export const DELIVERY_EVENTS = ['issue.created', 'issue.updated', 'ping', 'webhook.failing', 'webhook.disabled'] as const;

export const delivery = z
  .object({
    id: uuid().meta({ description: 'One per (event, webhook): the same on every attempt, and `X-Webhook-Delivery` of each.' }),
    webhook_id: id(),
    event: z.enum(DELIVERY_EVENTS),
    event_id: uuid().meta({ description: 'The `id` of the body: the same for every webhook the event went to.' }),
    status: z.enum(DELIVERY_STATUSES),
    failure_reason: z.enum(FAILURE_REASONS).nullable().meta({ description: 'Why a failed delivery failed; null otherwise.' }),
    attempt_count: z.number().int().min(0),
    next_attempt_at: timestamp().nullable().meta({ description: 'When a pending delivery is attempted next; null once it is finished.' }),
    redelivery_of: uuid().nullable().meta({ description: 'The delivery this one redelivers, or null.' }),
    recovery_id: id().nullable().meta({ description: 'The recovery job that sent this delivery again, or null.' }),
    issue_id: id().nullable().meta({ description: 'The issue of the event, or null (a ping, or a delivery made before deliveries recorded their issue).' }),
    out_of_order: z.boolean().meta({
      description:
        'True when this delivery was attempted while an earlier event of the same issue to the same webhook was still pending: it had waited the longest the service makes a later event wait (docs/webhook-delivery-controls.md).',
    }),
    created_at: timestamp(),
    updated_at: timestamp(),
    completed_at: timestamp().nullable(),
  })
  .meta({
    description: 'One event sent to one webhook, with its state.',
    examples: [
      {
        id: '5a1f3c2e-8b7d-5e4f-9a0b-1c2d3e4f5a6b',
        webhook_id: 3,
        event: 'issue.updated',
        event_id: '0b6f1f5e-5d0c-4a49-9a3e-4f1c2e8f3b7a',
        status: 'succeeded',
        failure_reason: null,
        attempt_count: 1,
        next_attempt_at: null,
        redelivery_of: null,
        recovery_id: null,
        issue_id: 42,
        out_of_order: false,
        created_at: '2026-01-15T09:00:00.123456Z',
        updated_at: '2026-01-15T09:00:00.234567Z',
        completed_at: '2026-01-15T09:00:00.234567Z',
      },
    ],
  });

/** Header names and values of one request or answer. */
const headerList = z.record(z.string(), z.string()).meta({ examples: [{ 'Content-Type': 'application/json' }] });

export const attempt = z
  .object({
    number: z.number().int().min(1),
    attempted_at: timestamp(),
    url: z.string().meta({ description: 'The URL called (the webhook URL at the time).' }),
    status_code: z.number().int().nullable().meta({ description: 'The receiver’s HTTP status, or null when it never answered.' }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed without an answer (timeout, refused, address not allowed...), or null.' }),
    duration_ms: z.number().int().min(0),
    response_body: z.string().nullable().meta({ description: 'The start of the receiver’s answer (4 KiB by default; the operator sets the bound), or null.' }),
    request_headers: headerList.nullable().meta({
      description: 'The headers sent with this attempt, signatures included (each attempt signs anew); null for attempts recorded before headers were kept.',
    }),
    response_headers: headerList.nullable().meta({
      description:
        'The headers of the receiver’s answer, up to a bound the operator sets; credentials (`Authorization`, cookies, tokens, keys) show as `[redacted]`. Null when there was no answer.',
    }),
  })
  .meta({ description: 'One attempt of a delivery.' });

export const deliveryDetail = delivery
  .extend({
    payload: z.unknown().meta({ description: 'The JSON body sent to the receiver, exactly as sent (see the `webhooks` section).' }),
    request_body: z.string().meta({ description: 'The body every attempt sends, as the exact text the signatures cover.' }),
    attempts: z.array(attempt).meta({ description: 'Every attempt, oldest first; at most one per entry of the retry schedule.' }),
  })
  .meta({ description: 'A delivery with its body and every attempt.' });

export type Delivery = z.infer<typeof delivery>;
export type DeliveryDetail = z.infer<typeof deliveryDetail>;

/** A point in time as a client writes it in a query: RFC 3339 with `Z` or an offset. */
const instantParameter = (description: string) => z.iso.datetime({ offset: true }).optional().meta({ description, format: 'date-time' });

/**
 * The filters of a webhook's delivery log (query parameters); they combine, and paging works the
 * same with any of them.
 */
export const deliveryLogFilters = z.object({
  status: z.enum(DELIVERY_STATUSES).optional().meta({ description: 'Only deliveries in this state.' }),
  event: z.enum(DELIVERY_EVENTS).optional().meta({ description: 'Only deliveries of this event type.' }),
  event_id: uuid().optional().meta({ description: 'Only the deliveries of this event (its `id`): the first and every re-send.' }),
  issue_id: z.coerce.number().int().min(1).max(MAX_ID).optional().meta({ description: 'Only deliveries of this issue’s events (the issue’s `id`).' }),
  created_after: instantParameter('Only deliveries created at or after this time.'),
  created_before: instantParameter('Only deliveries created before this time.'),
});

export type DeliveryLogFilters = z.infer<typeof deliveryLogFilters>;
