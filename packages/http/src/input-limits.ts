import { z } from 'zod';
import { DEFAULT_FIELD_ERROR_LIMITS, FIELD_ERRORS_CEILING, FieldErrorCollector, fieldName, type FieldErrorLimits } from './field-errors';
import { collectTextProblems } from './text-input';

/** What a service accepts in a request's query and how much of a validation failure it reports. */
export interface InputLimits extends FieldErrorLimits {
  /** Characters of one query parameter's name or value at most. */
  maxQueryValueLength: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = { ...DEFAULT_FIELD_ERROR_LIMITS, maxQueryValueLength: 1_024 };

/** The environment variables of these limits, to spread into a service's config schema. */
export const inputLimitsConfig = {
  HTTP_MAX_FIELD_ERRORS: z.coerce
    .number()
    .int()
    .min(1)
    .max(FIELD_ERRORS_CEILING)
    .default(DEFAULT_INPUT_LIMITS.maxFieldErrors)
    .describe('Field errors a 422 lists at most; `errors_omitted` counts the rest'),
  HTTP_MAX_QUERY_VALUE_LENGTH: z.coerce
    .number()
    .int()
    .min(64)
    .max(8_192)
    .default(DEFAULT_INPUT_LIMITS.maxQueryValueLength)
    .describe('Characters of one query parameter (name or value) at most; longer is a 422'),
};

export const inputLimitsFrom = (config: { HTTP_MAX_FIELD_ERRORS: number; HTTP_MAX_QUERY_VALUE_LENGTH: number }): Partial<InputLimits> => ({
  maxFieldErrors: config.HTTP_MAX_FIELD_ERRORS,
  maxQueryValueLength: config.HTTP_MAX_QUERY_VALUE_LENGTH,
});

/**
 * Adds the problems of a parsed query (express's simple parser: strings, or arrays of them for a
 * repeated name): over-long names or values, and text that cannot be stored.
 */
export function collectQueryProblems(query: Record<string, unknown>, collector: FieldErrorCollector, maxLength: number): void {
  for (const [name, value] of Object.entries(query)) {
    const values = Array.isArray(value) ? value : [value];
    const tooLong = name.length > maxLength || values.some((item) => typeof item === 'string' && item.length > maxLength);
    if (tooLong) collector.add(name, `The ${fieldName(name)} parameter must not be longer than ${maxLength} characters.`);
  }
  collectTextProblems(query, collector, 'query');
}
