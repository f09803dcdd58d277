import { z } from 'zod';

export const WEBHOOK_EVENTS = ['issue.created', 'issue.updated'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const isWebhookEvent = (value: string): value is WebhookEvent => (WEBHOOK_EVENTS as readonly string[]).includes(value);

const MAX_URL_LENGTH = 2048;
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
  .max(MAX_URL_LENGTH)
  .superRefine((value, context) => {
    const problem = urlSyntaxProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
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
  });

// Not trimmed: the secret is an HMAC key, and every character of it counts.
const secret = z.string().min(16).max(255).nullable();

/** POST .../webhooks: unknown and server-owned fields (id, team_id, timestamps) are dropped. */
export const createWebhookInput = z.object({
  url,
  events,
  secret: secret.optional(),
  active: z.boolean().default(true),
});

/** PATCH .../webhooks/{webhook}: only the fields sent change; a null secret removes it. */
export const updateWebhookInput = z.object({
  url: url.optional(),
  events: events.optional(),
  secret: secret.optional(),
  active: z.boolean().optional(),
});

export type CreateWebhookInput = z.infer<typeof createWebhookInput>;
export type UpdateWebhookInput = z.infer<typeof updateWebhookInput>;
