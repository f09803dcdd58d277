import { fields } from '@worklane/http';
import { z } from 'zod';

export const ISSUE_TYPES = ['bug', 'feature', 'task', 'improvement'] as const;
export const ISSUE_STATUSES = ['triage', 'backlog', 'todo', 'in_progress', 'in_review', 'done', 'cancelled'] as const;
export const ISSUE_PRIORITIES = ['none', 'low', 'medium', 'high', 'urgent'] as const;

/** An issue as the API returns it and as webhook payloads carry it. */
export interface Issue {
  id: number;
  project_id: number;
  number: number;
  reference_code: string;
  title: string;
  description: string | null;
  url: string | null;
  type: (typeof ISSUE_TYPES)[number];
  status: (typeof ISSUE_STATUSES)[number];
  priority: (typeof ISSUE_PRIORITIES)[number];
  assigned_to: number | null;
  /** `YYYY-MM-DD`. */
  estimated_date: string | null;
  created_by: number;
  created_at: string;
  updated_at: string;
}

/** Fields a client may set; everything else on an Issue is the server's. */
export const EDITABLE_FIELDS = ['title', 'description', 'url', 'type', 'status', 'priority', 'assigned_to', 'estimated_date'] as const;
export type EditableField = (typeof EDITABLE_FIELDS)[number];
export type IssueChanges = Partial<Record<EditableField, { from: unknown; to: unknown }>>;

/**
 * The longest text an issue takes, in characters (UTF-16 code units, as JSON counts them). They
 * are chosen so that any event fits the message bus by construction: an issue.updated event
 * carries each changed text three times (the issue, `changes.from`, `changes.to`) and JSON may
 * spend 6 bytes on one character (`\u0001`), so the largest event is about 3 × 6 × (title +
 * description + url) plus small fields: ~630 KB, well under NATS's 1 MiB. issue-event-size.test.ts
 * builds that event and checks it. Raising a limit means re-running that arithmetic.
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
  .refine((value) => value === null || isWebUrl(value), { error: 'The url field must be a valid http or https URL.' });

const nullableDate = z
  .string()
  .trim()
  .max(10, { error: 'The estimated date field must be a valid date in YYYY-MM-DD form.' })
  .nullable()
  .refine((value) => value === null || isCalendarDate(value), { error: 'The estimated date field must be a valid date in YYYY-MM-DD form.' });

const nullableUserId = z
  .number()
  .nullable()
  .refine((value) => value === null || (Number.isSafeInteger(value) && value > 0), { error: 'The assigned to field must be a user id.' });

/** POST body: `title` is required; the rest take the defaults the README's Issue resource lists. */
export const createIssueSchema = z.object({
  title: fields.requiredString(ISSUE_TEXT_LIMITS.title),
  description: fields.nullableString(ISSUE_TEXT_LIMITS.description).optional(),
  url: nullableUrl.optional(),
  type: z.enum(ISSUE_TYPES).optional(),
  status: z.enum(ISSUE_STATUSES).optional(),
  priority: z.enum(ISSUE_PRIORITIES).optional(),
  assigned_to: nullableUserId.optional(),
  estimated_date: nullableDate.optional(),
});

/** PATCH body: any subset; `title` and the enums may change but not become null. */
export const updateIssueSchema = createIssueSchema.partial();

export type CreateIssueInput = z.infer<typeof createIssueSchema>;
export type UpdateIssueInput = z.infer<typeof updateIssueSchema>;

/** The values of a new issue, defaults applied. */
export function newIssueValues(input: CreateIssueInput): Pick<Issue, EditableField> {
  return {
    title: input.title,
    description: input.description ?? null,
    url: input.url ?? null,
    type: input.type ?? 'task',
    status: input.status ?? 'triage',
    priority: input.priority ?? 'none',
    assigned_to: input.assigned_to ?? null,
    estimated_date: input.estimated_date ?? null,
  };
}

/** Each field the update sets to a value different from the current one, with both values. */
export function diffIssue(current: Pick<Issue, EditableField>, update: UpdateIssueInput): IssueChanges {
  const changes: IssueChanges = {};
  for (const field of EDITABLE_FIELDS) {
    if (!(field in update) || update[field] === undefined) continue;
    const to = update[field];
    const from = current[field];
    if (from !== to) changes[field] = { from, to };
  }
  return changes;
}

/**
 * The part of `BACKENDAPI-12` before the number: the project's name upper-cased with everything
 * but letters and digits removed. A name with no letters or digits at all gives `ISSUE`.
 */
export function referencePrefix(projectName: string): string {
  return projectName.toUpperCase().replace(/[^\p{L}\p{N}]/gu, '') || 'ISSUE';
}

export const referenceCode = (projectName: string, number: number) => `${referencePrefix(projectName)}-${number}`;
