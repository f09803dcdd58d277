import { z } from 'zod';

/**
 * Settings of the services that serve lists: how many rows a page holds by default and at most.
 * Read by the paging of @worklane/http; kept here so a config schema never loads express.
 */
export const pagingSettings = {
  LIST_DEFAULT_LIMIT: z.coerce.number().int().min(1).max(1_000).default(50).describe('Rows in a page of a list when the request gives no `limit` (capped at LIST_MAX_LIMIT)'),
  LIST_MAX_LIMIT: z.coerce.number().int().min(1).max(1_000).default(200).describe('Largest `limit` a list request may ask for; a larger one is refused with 422'),
  LIST_MAX_PAGE_BYTES: z.coerce
    .number()
    .int()
    .min(65_536)
    .max(16_777_216)
    .default(1_048_576)
    .describe('Largest JSON of the rows of one page, in bytes: a page of large rows stops early (never below one row) and its next_cursor goes on from there'),
};

const pagingSchema = z.object(pagingSettings);

/**
 * The page sizes a service's configuration sets (the shape @worklane/http's paging reads);
 * settings it lacks take their defaults, and the default page never exceeds the largest.
 */
export function listPageLimits(config: Partial<Record<keyof typeof pagingSettings, number>> = {}) {
  const settings = pagingSchema.parse(config);
  return {
    defaultLimit: Math.min(settings.LIST_DEFAULT_LIMIT, settings.LIST_MAX_LIMIT),
    maxLimit: settings.LIST_MAX_LIMIT,
    maxBytes: settings.LIST_MAX_PAGE_BYTES,
  };
}

/** A per-team quota: how many of `what` one team may hold; one more is refused. */
export const teamQuota = (defaultLimit: number, what: string) =>
  z.coerce.number().int().min(1).max(1_000_000).default(defaultLimit).describe(`${what} one team may hold; creating one more is refused (HTTP 409 \`quota_exceeded\`)`);

/**
 * What a service accepts in a query and how much of a validation failure a 422 lists. Read by
 * createServiceApp of @worklane/http (docs/api-limits.md).
 */
export const inputLimitSettings = {
  HTTP_MAX_FIELD_ERRORS: z.coerce.number().int().min(1).max(1_000).default(20).describe('Field errors a 422 lists at most; `errors_omitted` counts the rest'),
  HTTP_MAX_QUERY_VALUE_LENGTH: z.coerce
    .number()
    .int()
    .min(64)
    .max(8_192)
    .default(1_024)
    .describe('Characters of one query parameter (name or value) at most; a longer one is refused with 422'),
};
