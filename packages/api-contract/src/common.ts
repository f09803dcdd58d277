import { z } from 'zod';

/**
 * Building blocks shared by the resources: ids, timestamps, text fields and list envelopes.
 * Every schema here is what the services validate with or answer with; the OpenAPI document is
 * generated from them, so a constraint added here is enforced and documented at once.
 */

/** The largest id: ids are bigserial, kept below 2^53 so that they are exact JSON numbers. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A server-assigned integer id, as responses carry it. */
export const id = () => z.number().int().min(1).max(MAX_ID);

/** `2026-01-15T09:00:00.123456Z`: UTC with microseconds, as every timestamp of the API. */
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
export const timestamp = () =>
  z
    .string()
    .regex(TIMESTAMP_PATTERN)
    .meta({ format: 'date-time', examples: ['2026-01-15T09:00:00.123456Z'] });

/** Delivery and event ids. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const uuid = () =>
  z
    .string()
    .regex(UUID_PATTERN)
    .meta({ format: 'uuid', examples: ['0b6f1f5e-5d0c-4a49-9a3e-4f1c2e8f3b7a'] });

/** What String.prototype.trim removes (white space and line terminators), as a regular expression class body. */
export const WHITE_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * At least one character that is not white space. Text fields are trimmed before their length is
 * checked, so a value of spaces only is empty; the pattern says so in the document.
 */
const NOT_BLANK = `[^${WHITE_SPACE}]`;

/** Field builders of request bodies. */
export const fields = {
  /** A required string, trimmed, 1..max characters. */
  requiredString: (max: number) => z.string().trim().min(1).max(max).meta({ pattern: NOT_BLANK }),
  /** An optional string that may be null, trimmed, up to max characters; empty becomes null. */
  nullableString: (max: number) =>
    z
      .string()
      .trim()
      .max(max)
      .nullable()
      .transform((value) => (value === '' ? null : value)),
};

/** `{"data": [...], "next_cursor": ...}`: a page of a list that always pages. */
export function pageOf<Item extends z.ZodType>(item: Item, description: string) {
  return z
    .object({
      data: z.array(item),
      next_cursor: z
        .string()
        .nullable()
        .meta({ description: 'Cursor of the next page (pass it as `cursor`), null on the last page. The same page is linked from the `Link: <...>; rel="next"` header.' }),
    })
    .meta({ description });
}

/**
 * `{"data": [...]}` for the lists that answer the whole set unless paging is asked for, and
 * `{"data": [...], "next_cursor": ...}` when `limit` or `cursor` is given.
 */
export function wholeListOf<Item extends z.ZodType>(item: Item, description: string) {
  return z
    .object({
      data: z.array(item),
      next_cursor: z.string().nullable().optional().meta({ description: 'Only when `limit` or `cursor` was given: the cursor of the next page, null on the last page.' }),
    })
    .meta({ description });
}
