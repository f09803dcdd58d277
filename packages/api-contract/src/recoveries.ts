import { z } from 'zod';
import { id, timestamp } from './common';

/**
 * Recovery jobs: after an outage of its endpoint, a webhook's failed deliveries of a time window
 * are sent again, once per event and with the event's own id, at the webhook's pace.
 */
export const RECOVERY_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type RecoveryStatus = (typeof RECOVERY_STATUSES)[number];

/** A point in time as a client writes it: RFC 3339 with `Z` or an offset, any fraction of a second. */
const instant = () => z.iso.datetime({ offset: true }).meta({ format: 'date-time', examples: ['2026-01-15T08:00:00Z'] });

export const recoverWebhookInput = z
  .object({
    since: instant().meta({ description: 'Start of the window (included): deliveries created at or after it.' }),
    until: instant().optional().meta({ description: 'End of the window (excluded); now when not given, and never later than now.' }),
  })
  .meta({
    description: 'The window of the deliveries to send again, by when each delivery was created.',
    examples: [{ since: '2026-01-15T08:00:00Z', until: '2026-01-15T12:00:00Z' }],
  });

export type RecoverWebhookInput = z.infer<typeof recoverWebhookInput>;

const count = (description: string) => z.number().int().min(0).meta({ description });

export const recovery = z
  .object({
    id: id(),
    webhook_id: id(),
    status: z.enum(RECOVERY_STATUSES).meta({
      description:
        '`queued` until a delivery replica takes it, `running` while it sends, `succeeded` once every event found was sent again (or needed nothing), `failed` when it could not go on (`error` says why).',
    }),
    since: timestamp(),
    until: timestamp().meta({ description: 'The end of the window: the `until` asked for, or when the job was created.' }),
    pace_per_second: z.number().int().min(1).meta({ description: 'Re-sends started per second: the webhook’s rate limit, or the operator’s default pace.' }),
    found: count('Events whose delivery failed in the window (each counted once, however many of its deliveries failed).'),
    queued: count('Events sent again so far, each as a new delivery with the event’s id (`redelivery_of` names the failed one).'),
    skipped: count('Events found that needed nothing: they had reached the webhook, or were on their way, by the time the job came to them.'),
    done: count('Re-sends that are finished, delivered or not.'),
    delivered: count('Re-sends the receiver accepted.'),
    failed: count('Re-sends that failed again (their retries used up); a later recovery can send them again.'),
    error: z.string().nullable().meta({ description: 'Why a failed job stopped; null otherwise.' }),
    created_at: timestamp(),
    started_at: timestamp().nullable(),
    finished_at: timestamp().nullable(),
    updated_at: timestamp(),
  })
  .meta({
    description: 'A recovery job and its progress.',
    examples: [
      {
        id: 7,
        webhook_id: 3,
        status: 'running',
        since: '2026-01-15T08:00:00.000000Z',
        until: '2026-01-15T12:00:00.000000Z',
        pace_per_second: 10,
        found: 120,
        queued: 40,
        skipped: 2,
        done: 35,
        delivered: 35,
        failed: 0,
        error: null,
        created_at: '2026-01-15T12:30:00.123456Z',
        started_at: '2026-01-15T12:30:00.234567Z',
        finished_at: null,
        updated_at: '2026-01-15T12:30:04.345678Z',
      },
    ],
  });

export type Recovery = z.infer<typeof recovery>;
