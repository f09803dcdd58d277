import { z } from 'zod';
import { id, timestamp, uuid } from './common';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Why a delivery failed: 410 Gone, retries used up, its webhook deleted or deactivated before it
 * could be sent, or its event dead-lettered (it could never be published; never attempted).
 */
export const FAILURE_REASONS = ['gone', 'exhausted', 'webhook_deleted', 'webhook_inactive', 'dead_lettered'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** The events a delivery can carry: the issue events and the `ping` a client asks for. */
export const DELIVERY_EVENTS = ['issue.created', 'issue.updated', 'ping'] as const;

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
        created_at: '2026-01-15T09:00:00.123456Z',
        updated_at: '2026-01-15T09:00:00.234567Z',
        completed_at: '2026-01-15T09:00:00.234567Z',
      },
    ],
  });

export const attempt = z
  .object({
    number: z.number().int().min(1),
    attempted_at: timestamp(),
    url: z.string().meta({ description: 'The URL called (the webhook URL at the time).' }),
    status_code: z.number().int().nullable().meta({ description: 'The receiver’s HTTP status, or null when it never answered.' }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed without an answer (timeout, refused, address not allowed...), or null.' }),
    duration_ms: z.number().int().min(0),
    response_body: z.string().nullable().meta({ description: 'The start of the receiver’s answer (at most 4 KiB), or null.' }),
  })
  .meta({ description: 'One attempt of a delivery.' });

export const deliveryDetail = delivery
  .extend({
    payload: z.unknown().meta({ description: 'The JSON body sent to the receiver, exactly as sent (see the `webhooks` section).' }),
    attempts: z.array(attempt).meta({ description: 'Every attempt, oldest first; at most one per entry of the retry schedule.' }),
  })
  .meta({ description: 'A delivery with its body and every attempt.' });

export type Delivery = z.infer<typeof delivery>;
export type DeliveryDetail = z.infer<typeof deliveryDetail>;
