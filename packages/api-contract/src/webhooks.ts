import { z } from 'zod';
import { id, timestamp } from './common';

/** The events a webhook may subscribe to. */
export const WEBHOOK_EVENTS = ['issue.created', 'issue.updated'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const isWebhookEvent = (value: string): value is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(value);

export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_SECRET_MIN_LENGTH = 16;
export const WEBHOOK_SECRET_MAX_LENGTH = 255;

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

/** POST .../webhooks: unknown and server-owned fields (id, team_id, timestamps) are ignored. */
export const createWebhookInput = z
  .object({
    url,
    events,
    secret: secret.optional(),
    active: z.boolean().default(true),
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
  })
  .meta({ description: 'The fields to change; the others stay as they are. A null secret removes it.', examples: [{ active: false }] });

export type CreateWebhookInput = z.infer<typeof createWebhookInput>;
export type UpdateWebhookInput = z.infer<typeof updateWebhookInput>;

export const webhook = z
  .object({
    id: id(),
    team_id: id(),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENTS)),
    active: z.boolean(),
    created_at: timestamp(),
    updated_at: timestamp(),
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
      },
    ],
  });

export type Webhook = z.infer<typeof webhook>;
