import { z } from 'zod';
import { fields, id, timestamp } from './common';

export const ISSUE_TYPES = ['bug', 'feature', 'task', 'improvement'] as const;
export const ISSUE_STATUSES = ['triage', 'backlog', 'todo', 'in_progress', 'in_review', 'done', 'cancelled'] as const;
export const ISSUE_PRIORITIES = ['none', 'low', 'medium', 'high', 'urgent'] as const;

/**
 * The longest text an issue takes, in characters (UTF-16 code units, as JSON counts them). They
 * are chosen so that any event fits the message bus by construction: an issue.updated event
 * carries each changed text three times (the issue, `changes.from`, `changes.to`) and JSON may
 * spend 6 bytes on one character (`\u0001`), so the largest event is about 3 × 6 × (title +
 * description + url) plus small fields: ~630 KB, well under NATS's 1 MiB. The issue service's
 * issue-event-size.test.ts builds that event and checks it. Raising a limit means re-running that
 * arithmetic.
 */
export const ISSUE_TEXT_LIMITS = {
  title: 255,
  description: 32_768,
  url: 2_048,
} as const;

/** A real calendar day in `YYYY-MM-DD` form (2026-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** An absolute http(s) URL, as an issue's link to a ticket, a page or a pull request. */
export function isWebUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname.length > 0;
}

const nullableUrl = z
  .string()
  .trim()
  .max(ISSUE_TEXT_LIMITS.url)
  .nullable()
  .transform((value) => (value === '' ? null : value))
  .refine((value) => value === null || isWebUrl(value), { error: 'The url field must be a valid http or https URL.' })
  .meta({
    anyOf: [{ type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9]', maxLength: ISSUE_TEXT_LIMITS.url }, { type: 'string', const: '' }, { type: 'null' }],
    description: 'An absolute `http://` or `https://` URL (a ticket, a page, a pull request); an empty string or null for none.',
    examples: ['https://github.com/acme/backend-api/pull/12'],
  });

const nullableDate = z
  .string()
  .trim()
  .max(10, { error: 'The estimated date field must be a valid date in YYYY-MM-DD form.' })
  .nullable()
  .refine((value) => value === null || isCalendarDate(value), { error: 'The estimated date field must be a valid date in YYYY-MM-DD form.' })
  .meta({
    anyOf: [{ type: 'string', format: 'date', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }, { type: 'null' }],
    description: 'A calendar day, `YYYY-MM-DD`, or null.',
    examples: ['2026-02-01'],
  });

const nullableUserId = z
  .number()
  .nullable()
  .refine((value) => value === null || (Number.isSafeInteger(value) && value > 0), { error: 'The assigned to field must be a user id.' })
  .meta({
    anyOf: [{ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }, { type: 'null' }],
    description: 'The id of a user of the team, or null. A user who is not a member of the team is refused with 422.',
    examples: [3],
  });

const title = fields.requiredString(ISSUE_TEXT_LIMITS.title).meta({ examples: ['Checkout fails on Safari'] });

/** POST body: `title` is required; the rest take the defaults the README's Issue resource lists. */
export const createIssueSchema = z
  .object({
    title,
    description: fields.nullableString(ISSUE_TEXT_LIMITS.description).optional(),
    url: nullableUrl.optional(),
    type: z.enum(ISSUE_TYPES).optional().meta({ description: 'Default `task`.' }),
    status: z.enum(ISSUE_STATUSES).optional().meta({ description: 'Default `triage`.' }),
    priority: z.enum(ISSUE_PRIORITIES).optional().meta({ description: 'Default `none`.' }),
    assigned_to: nullableUserId.optional(),
    estimated_date: nullableDate.optional(),
  })
  .meta({
    description: 'A new issue: `title` is required, the other fields default to null or their named default. Unknown and server-owned fields are ignored.',
    examples: [{ title: 'Checkout fails on Safari', type: 'bug', priority: 'high' }],
  });

/** PATCH body: any subset; `title` and the enums may change but not become null. */
export const updateIssueSchema = createIssueSchema.partial().meta({
  description: 'The fields to change; the others stay as they are. A change fires an `issue.updated` webhook.',
  examples: [{ status: 'in_progress', assigned_to: 3 }],
});

export type CreateIssueInput = z.infer<typeof createIssueSchema>;
export type UpdateIssueInput = z.infer<typeof updateIssueSchema>;

/** One issue as the API returns it: the example of the Issue resource and of the webhook bodies. */
export const ISSUE_EXAMPLE = {
  id: 42,
  project_id: 7,
  number: 12,
  reference_code: 'BACKENDAPI-12',
  title: 'Checkout fails on Safari',
  description: null,
  url: null,
  type: 'bug',
  status: 'in_progress',
  priority: 'high',
  assigned_to: 3,
  estimated_date: '2026-02-01',
  created_by: 1,
  created_at: '2026-01-14T17:20:41.551207Z',
  updated_at: '2026-01-15T09:00:00.123456Z',
};

export const issue = z
  .object({
    id: id(),
    project_id: id(),
    number: z.number().int().min(1).meta({ description: 'The issue number within its project, from 1.' }),
    reference_code: z.string().meta({ description: 'The project name upper-cased without other characters, and the number: `BACKENDAPI-12`.' }),
    title: z.string(),
    description: z.string().nullable(),
    url: z.string().nullable(),
    type: z.enum(ISSUE_TYPES),
    status: z.enum(ISSUE_STATUSES),
    priority: z.enum(ISSUE_PRIORITIES),
    assigned_to: id().nullable(),
    estimated_date: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/)
      .nullable()
      .meta({ description: '`YYYY-MM-DD`, or null.' }),
    created_by: id(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({
    description: 'An issue of a project, as the API returns it and as webhook bodies carry it.',
    examples: [ISSUE_EXAMPLE],
  });

/** An issue as the API returns it and as webhook payloads carry it. */
export type Issue = z.infer<typeof issue>;
