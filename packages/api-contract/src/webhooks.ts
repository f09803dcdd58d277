import { z } from 'zod';
import { MAX_ID, fields, id, timestamp } from './common';

/** The events a webhook may subscribe to. */
export const WEBHOOK_EVENTS = ['issue.created', 'issue.updated'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const isWebhookEvent = (value: string): value is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(value);

/**
 * Events about a webhook itself (its endpoint keeps failing, it was switched off), sent to the
 * team's webhooks that opt in through `operational_events`; `events` never holds them.
 */
export const OPERATIONAL_EVENTS = ['webhook.failing', 'webhook.disabled'] as const;
export type OperationalEvent = (typeof OPERATIONAL_EVENTS)[number];

export const isOperationalEvent = (value: string): value is OperationalEvent => (OPERATIONAL_EVENTS as readonly string[]).includes(value);

export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_SECRET_MIN_LENGTH = 16;
export const WEBHOOK_SECRET_MAX_LENGTH = 255;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 1024;
/** Organization or project ids one filter list may hold. */
export const WEBHOOK_FILTER_MAX_IDS = 100;
/** `ed25519_public_key`: `whpk_` and the base64 of the 32-byte public key (Standard Webhooks). */
export const ED25519_PUBLIC_KEY_PATTERN = /^whpk_[A-Za-z0-9+/]{43}=$/;

// Spaces and control characters are silently dropped or encoded by URL parsers: refuse them
// so that the URL stored is the URL that was checked and will be called.
const UNSAFE_CHARACTERS = /[\s\x00-\x1f\x7f]/;

/** Why `value` is not an acceptable webhook URL (before its host is resolved), or undefined. */
export function urlSyntaxProblem(value: string): string | undefined {
  if (!/^https:\/\//i.test(value)) return 'The url field must be an absolute https:// URL.';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'The url field must be a valid URL.';
  }
  if (UNSAFE_CHARACTERS.test(value) || url.hostname === '') return 'The url field must be a valid URL.';
  if (url.username !== '' || url.password !== '') return 'The url field must not contain credentials.';
  return undefined;
}

const url = z
  .string()
  .max(WEBHOOK_URL_MAX_LENGTH)
  .superRefine((value, context) => {
    const problem = urlSyntaxProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    format: 'uri',
    pattern: '^[Hh][Tt][Tt][Pp][Ss]://[^\\s@/?#]+([/?#][^\\s]*)?$',
    description:
      'An absolute `https://` URL without credentials, at most 2,048 characters, whose host resolves only to public addresses (the operator may allow other ranges). A URL whose host does not resolve, or resolves to a private address, is refused with 422.',
    examples: ['https://hooks.example.com/worklane'],
  });

// The length is checked before the items, so a huge array costs one error, not one per item.
const events = z
  .array(z.unknown())
  .refine((items) => items.length <= WEBHOOK_EVENTS.length, { error: `The events field must not have more than ${WEBHOOK_EVENTS.length} items.`, abort: true })
  .pipe(z.array(z.enum(WEBHOOK_EVENTS)).min(1))
  .superRefine((names, context) => {
    names.forEach((name, index) => {
      if (names.indexOf(name) !== index) context.addIssue({ code: 'custom', path: [index], message: `The events.${index} field has a duplicate value.` });
    });
  })
  .meta({
    // The checks above, as the document states them (the first step alone would read as "any array").
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENTS] },
    minItems: 1,
    maxItems: WEBHOOK_EVENTS.length,
    uniqueItems: true,
    description: 'The events to receive: one or both of `issue.created` and `issue.updated`, each once.',
    examples: [['issue.created', 'issue.updated']],
  });

// Not trimmed: the secret is an HMAC key, and every character of it counts.
const secret = z
  .string()
  .min(WEBHOOK_SECRET_MIN_LENGTH)
  .max(WEBHOOK_SECRET_MAX_LENGTH)
  .nullable()
  .meta({
    description: 'The signing secret (16 to 255 characters, used as given); null for none. Accepted, never returned, stored encrypted.',
    writeOnly: true,
    examples: ['whsec_5f2b8c1e9d7a4b3c'],
  });

const description = fields.nullableString(WEBHOOK_DESCRIPTION_MAX_LENGTH).meta({
  description: `What the webhook is for, up to ${WEBHOOK_DESCRIPTION_MAX_LENGTH.toLocaleString('en')} characters; an empty string or null removes it.`,
  examples: ['Syncs issues to the support desk'],
});

// A list of ids, its length checked before its items (one error for a huge list); repeats are dropped.
const idList = (what: string) =>
  z
    .array(z.unknown())
    .refine((items) => items.length <= WEBHOOK_FILTER_MAX_IDS, { error: `The list must not have more than ${WEBHOOK_FILTER_MAX_IDS} items.`, abort: true })
    .pipe(z.array(id()))
    .transform((ids) => [...new Set(ids)].sort((a, b) => a - b))
    .meta({
      type: 'array',
      items: { type: 'integer', minimum: 1, maximum: MAX_ID },
      maxItems: WEBHOOK_FILTER_MAX_IDS,
      description: `Ids of the team's ${what}, at most ${WEBHOOK_FILTER_MAX_IDS}; empty means every one.`,
    });

/** The scope of a webhook besides its events: only events of these organizations and projects. */
const filtersInput = z
  .object({ organization_ids: idList('organizations').optional(), project_ids: idList('projects').optional() })
  .nullable()
  .transform((value) => ({ organization_ids: value?.organization_ids ?? [], project_ids: value?.project_ids ?? [] }))
  .meta({
    description:
      'Only events of issues in these organizations and projects are delivered (both lists must match when both are given); an empty or absent list, or null, means every one. Events outside the scope are neither delivered nor logged. Sent whole on PATCH: a list left out becomes empty.',
    examples: [{ organization_ids: [], project_ids: [12, 14] }],
  });

const rateLimitPerSecond = z
  .number()
  .int()
  .min(1)
  .nullable()
  .meta({
    description:
      'At most this many deliveries per second to the endpoint (the operator sets the highest value allowed, 1,000 by default); null for no limit. Deliveries above it wait in the queue.',
    examples: [10],
  });

const operationalEvents = z
  .array(z.unknown())
  .refine((items) => items.length <= OPERATIONAL_EVENTS.length, { error: `The list must not have more than ${OPERATIONAL_EVENTS.length} items.`, abort: true })
  .pipe(z.array(z.enum(OPERATIONAL_EVENTS)))
  .superRefine((names, context) => {
    names.forEach((name, index) => {
      if (names.indexOf(name) !== index) context.addIssue({ code: 'custom', path: [index], message: `The operational_events.${index} field has a duplicate value.` });
    });
  })
  .meta({
    type: 'array',
    items: { type: 'string', enum: [...OPERATIONAL_EVENTS] },
    maxItems: OPERATIONAL_EVENTS.length,
    uniqueItems: true,
    description:
      'Events about the team’s webhooks to receive here: `webhook.failing` (an endpoint has failed for a while) and `webhook.disabled` (an endpoint was switched off after failing too long). Empty by default.',
    examples: [['webhook.failing', 'webhook.disabled']],
  });

const ed25519Signing = z.boolean().meta({
  description:
    'Also sign every delivery with an ed25519 key of the webhook (`v1a,` entries of `webhook-signature`); its public key is returned as `ed25519_public_key`. Turning it off discards the key; turning it on again makes a new one.',
});

/** POST .../webhooks: unknown and server-owned fields (id, team_id, timestamps) are ignored. */
export const createWebhookInput = z
  .object({
    url,
    events,
    secret: secret.optional(),
    active: z.boolean().default(true),
    description: description.default(null),
    filters: filtersInput.default({ organization_ids: [], project_ids: [] }),
    rate_limit_per_second: rateLimitPerSecond.default(null),
    operational_events: operationalEvents.default([]),
    ed25519_signing: ed25519Signing.default(false),
  })
  .meta({
    description: 'A new webhook. Unknown and server-owned fields are ignored.',
    examples: [{ url: 'https://hooks.example.com/worklane', events: ['issue.created', 'issue.updated'], secret: 'whsec_5f2b8c1e9d7a4b3c', active: true }],
  });

/** PATCH .../webhooks/{webhook}: only the fields sent change; a null secret removes it. */
export const updateWebhookInput = z
  .object({
    url: url.optional(),
    events: events.optional(),
    secret: secret.optional(),
    active: z.boolean().optional(),
    description: description.optional(),
    filters: filtersInput.optional(),
    rate_limit_per_second: rateLimitPerSecond.optional(),
    operational_events: operationalEvents.optional(),
    ed25519_signing: ed25519Signing.optional(),
  })
  .meta({
    description:
      'The fields to change; the others stay as they are. A new `secret` replaces the old one at once, and old secrets of a rotation stop signing; a null secret removes it. To change a secret without a gap, rotate it instead. `active: true` clears `disabled_reason` and `disabled_at`.',
    examples: [{ active: false }],
  });

/** POST .../webhooks/{webhook}/secret/rotate. */
export const rotateSecretInput = z
  .object({
    secret: z
      .string()
      .min(WEBHOOK_SECRET_MIN_LENGTH)
      .max(WEBHOOK_SECRET_MAX_LENGTH)
      .optional()
      .meta({ description: 'The new signing secret (16 to 255 characters, used as given); when absent, one is generated.', writeOnly: true }),
    overlap_seconds: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({
        description:
          'How long the replaced secret keeps signing next to the new one: 86,400 (24 hours) by default, at most 604,800 (7 days) unless the operator set other limits. 0 replaces it at once.',
        examples: [86400],
      }),
  })
  .meta({ description: 'A secret rotation: the new secret, or none to have one generated, and how long the old one keeps signing.', examples: [{ overlap_seconds: 3600 }] });

export type CreateWebhookInput = z.infer<typeof createWebhookInput>;
export type UpdateWebhookInput = z.infer<typeof updateWebhookInput>;
export type RotateSecretInput = z.infer<typeof rotateSecretInput>;

export const webhook = z
  .object({
    id: id(),
    team_id: id(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    active: z.boolean(),
    created_at: timestamp(),
    updated_at: timestamp(),
    description: z.string().nullable(),
    filters: z
      .object({ organization_ids: z.array(id()), project_ids: z.array(id()) })
      .meta({ description: 'The organizations and projects whose issues’ events are delivered; an empty list means every one.' }),
    rate_limit_per_second: z.number().int().min(1).nullable().meta({ description: 'Deliveries per second at most to the endpoint; null for no limit.' }),
    operational_events: z.array(z.enum(OPERATIONAL_EVENTS)).meta({ description: 'The events about the team’s webhooks this one receives.' }),
    disabled_reason: z
      .string()
      .nullable()
      .meta({ description: 'Why Worklane switched the webhook off (its endpoint failed for too long); null otherwise. Cleared when the webhook is activated again.' }),
    disabled_at: timestamp().nullable().meta({ description: 'When Worklane switched the webhook off; null otherwise.' }),
    ed25519_public_key: z
      .string()
      .regex(ED25519_PUBLIC_KEY_PATTERN)
      .nullable()
      .meta({ description: 'With `ed25519_signing`: the public key that verifies the `v1a,` signatures (`whpk_` and base64); null otherwise.' }),
    secret_rotated_at: timestamp().nullable().meta({ description: 'When the secret last changed (a rotation or a PATCH); null when it never changed.' }),
  })
  .meta({
    description: 'A webhook subscription of a team. Its secret is never returned.',
    examples: [
      {
        id: 3,
        team_id: 1,
        url: 'https://hooks.example.com/worklane',
        events: ['issue.created', 'issue.updated'],
        active: true,
        created_at: '2026-01-15T09:00:00.123456Z',
        updated_at: '2026-01-15T09:00:00.123456Z',
        description: null,
        filters: { organization_ids: [], project_ids: [] },
        rate_limit_per_second: null,
        operational_events: [],
        disabled_reason: null,
        disabled_at: null,
        ed25519_public_key: null,
        secret_rotated_at: null,
      },
    ],
  });

export type Webhook = z.infer<typeof webhook>;

/** The answer of a rotation: the webhook and, this once, its new secret. */
export const rotatedWebhook = webhook
  .extend({
    secret: z.string().meta({ description: 'The new signing secret. It is shown this once: store it now.' }),
  })
  .meta({
    description: 'The webhook after a secret rotation, with the new secret (shown only in this answer).',
    examples: [
      {
        id: 3,
        team_id: 1,
        url: 'https://hooks.example.com/worklane',
        events: ['issue.created', 'issue.updated'],
        active: true,
        created_at: '2026-01-15T09:00:00.123456Z',
        updated_at: '2026-02-01T10:00:00.000000Z',
        description: null,
        filters: { organization_ids: [], project_ids: [] },
        rate_limit_per_second: null,
        operational_events: [],
        disabled_reason: null,
        disabled_at: null,
        ed25519_public_key: null,
        secret_rotated_at: '2026-02-01T10:00:00.000000Z',
        secret: 'G2m8r4Jx0Qf7WZtH1cVbN5kLs9PaE3dY6uRiOw2TqXo',
      },
    ],
  });

export type RotatedWebhook = z.infer<typeof rotatedWebhook>;
