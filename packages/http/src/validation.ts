import { z } from 'zod';
import { validationFailed } from './errors';
import { FieldErrorCollector } from './field-errors';

export type FieldErrors = Record<string, string[]>;

/** "github_repository" reads as "github repository" in messages, as Laravel writes them. */
const attribute = (field: string) => field.replace(/_/g, ' ');

const typeNames: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  number: 'a number',
  int: 'an integer',
  object: 'an object',
};

function describeIssue(field: string, issue: z.core.$ZodIssue): string {
  const name = attribute(field);
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return `The ${name} field is required.`;
      if (issue.input === null) return `The ${name} field must not be null.`;
      return `The ${name} field must be ${typeNames[issue.expected] ?? issue.expected}.`;
    case 'too_small':
      if (issue.origin === 'string' && issue.minimum === 1) return `The ${name} field is required.`;
      if (issue.origin === 'array') return `The ${name} field must have at least ${issue.minimum} item${issue.minimum === 1 ? '' : 's'}.`;
      return `The ${name} field must be at least ${issue.minimum} characters.`;
    case 'too_big':
      if (issue.origin === 'array') return `The ${name} field must not have more than ${issue.maximum} items.`;
      return `The ${name} field must not be greater than ${issue.maximum} characters.`;
    case 'invalid_value':
      return `The selected ${name} is invalid.`;
    case 'invalid_format':
      return `The ${name} field format is invalid.`;
    default:
      return issue.message && !issue.message.startsWith('Invalid') ? issue.message : `The ${name} field is invalid.`;
  }
}

/**
 * The JSON body of a request: `{}` when it has none (nothing to change, or every field missing),
 * else what it holds, which parseBody then checks is an object (`null`, an array or a number is a
 * 422, never taken as "no body").
 */
export const bodyOf = (req: { body?: unknown }): unknown => (req.body === undefined ? {} : req.body);

/**
 * Validates a JSON body against a zod object schema. Unknown fields are dropped; failures become
 * a 422 whose `errors` lists messages per field (array items as `events.1`), at most
 * FIELD_ERRORS_CEILING of them however many the body has.
 */
export function parseBody<Schema extends z.ZodType>(schema: Schema, body: unknown): z.infer<Schema> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationFailed({ body: ['The request body must be a JSON object.'] });
  }
  const result = schema.safeParse(body, { reportInput: true });
  if (result.success) return result.data;
  const collector = new FieldErrorCollector();
  const { issues } = result.error;
  for (const [index, issue] of issues.entries()) {
    if (collector.full) {
      collector.omitted += issues.length - index;
      break;
    }
    const field = issue.path.map(String).join('.') || 'body';
    const topField = String(issue.path[0] ?? 'body');
    // A custom message (set with `error:` in the schema) is used as written.
    const message = issue.code === 'custom' ? issue.message : describeIssue(topField, issue);
    collector.add(field, message);
  }
  throw validationFailed(collector.errors, collector.omitted);
}

/** Field builders of the request schemas: defined with them, in packages/api-contract. */
export { fields } from '@worklane/api-contract';
