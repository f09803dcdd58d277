import { DEFAULT_FIELD_ERROR_LIMITS, FieldErrorCollector, fieldName, type FieldErrorLimits } from './field-errors';
import { collectTextProblems } from './text-input';

/** What a service accepts in a request's query and how much of a validation failure it reports. */
export interface InputLimits extends FieldErrorLimits {
  /** Characters of one query parameter's name or value at most. */
  maxQueryValueLength: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = { ...DEFAULT_FIELD_ERROR_LIMITS, maxQueryValueLength: 1_024 };

/** The limits a service's parsed config (with inputLimitSettings of @worklane/config) sets. */
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
