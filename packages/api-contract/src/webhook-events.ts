import { z } from 'zod';
import { id, timestamp, uuid } from './common';
import { ISSUE_EXAMPLE, issue } from './issues';
import { WEBHOOK_EVENTS } from './webhooks';

/** The fields of an issue a client may set, and so the keys `changes` may hold. */
export const ISSUE_EDITABLE_FIELDS = ['title', 'description', 'url', 'type', 'status', 'priority', 'assigned_to', 'estimated_date'] as const;

const change = z
  .object({ from: z.unknown().meta({ description: 'The value before the change.' }), to: z.unknown().meta({ description: 'The value after it.' }) })
  .meta({ description: 'One changed field.' });

const envelope = {
  id: uuid().meta({ description: 'The event id: the same for every webhook that receives the event and on every attempt.' }),
  created_at: timestamp().meta({ description: 'When the change was committed.' }),
  team_id: id(),
};

export const issueCreatedEvent = z.object({ ...envelope, event: z.literal('issue.created'), issue }).meta({
  description: 'Sent when an issue is created: the event envelope with the new issue.',
  examples: [
    {
      id: '0b6f1f5e-5d0c-4a49-9a3e-4f1c2e8f3b7a',
      event: 'issue.created',
      created_at: '2026-01-14T17:20:41.551207Z',
      team_id: 1,
      issue: { ...ISSUE_EXAMPLE, status: 'triage', assigned_to: null, updated_at: '2026-01-14T17:20:41.551207Z' },
    },
  ],
});

export const issueUpdatedEvent = z
  .object({
    ...envelope,
    event: z.literal('issue.updated'),
    issue,
    changes: z
      .partialRecord(z.enum(ISSUE_EDITABLE_FIELDS), change)
      .meta({ description: 'Each field that changed, with its old and new value. A PATCH that changes nothing sends no event.' }),
  })
  .meta({
    description: 'Sent when a PATCH changes at least one field of an issue.',
    examples: [
      {
        id: '0b6f1f5e-5d0c-4a49-9a3e-4f1c2e8f3b7a',
        event: 'issue.updated',
        created_at: '2026-01-15T09:00:00.123456Z',
        team_id: 1,
        issue: ISSUE_EXAMPLE,
        changes: { status: { from: 'triage', to: 'in_progress' }, assigned_to: { from: null, to: 3 } },
      },
    ],
  });

export const pingEvent = z
  .object({
    ...envelope,
    event: z.literal('ping'),
    webhook: z.object({ id: id(), url: z.string(), events: z.array(z.enum(WEBHOOK_EVENTS)) }),
  })
  .meta({ description: 'Sent to one webhook when a client calls its `ping` operation.' });

/** The headers of every delivery attempt, as receivers see them (packages/webhooks signs them). */
export const DELIVERY_HEADERS = {
  'User-Agent': { required: true, description: '`Worklane-Webhooks/<version>`.', schema: { type: 'string', examples: ['Worklane-Webhooks/0.1.0'] } },
  'X-Webhook-Event': {
    required: true,
    description: 'The event: `issue.created`, `issue.updated`, `ping`, or an operational event (`webhook.failing`, `webhook.disabled`) for the webhooks that opt in to them.',
    schema: { type: 'string', enum: ['issue.created', 'issue.updated', 'ping', 'webhook.failing', 'webhook.disabled'] },
  },
  'X-Webhook-Delivery': { required: true, description: 'The delivery id: one per (event, webhook), the same on every retry.', schema: { type: 'string', format: 'uuid' } },
  'X-Webhook-Signature': {
    required: false,
    description: 'With a secret: lowercase hex HMAC-SHA256 of the raw body, keyed with the secret (the newest one during a rotation). Compare in constant time.',
    schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
  },
  'webhook-id': { required: false, description: 'With a secret (Standard Webhooks): the delivery id.', schema: { type: 'string', format: 'uuid' } },
  'webhook-timestamp': {
    required: false,
    description: 'With a secret (Standard Webhooks): Unix seconds of this attempt; refuse old ones to stop replays.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'webhook-signature': {
    required: false,
    description:
      'With a secret (Standard Webhooks): `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the secret’s UTF-8 bytes. Space-separated entries: one per secret during a rotation’s overlap (the newest first), and `v1a,` with the base64 ed25519 signature of the same content when the webhook signs with ed25519 (verify it with `ed25519_public_key`). Accept the delivery when any entry verifies.',
    schema: { type: 'string', pattern: '^v1a?,[A-Za-z0-9+/]+={0,2}( v1a?,[A-Za-z0-9+/]+={0,2})*$' },
  },
} as const;
