import { z } from '@worklane/config';
import { RpcError } from '@worklane/grpc';
import { textProblem } from '@worklane/http';

/**
 * Validates a gRPC request; the first problem becomes INVALID_ARGUMENT with a message that
 * names the field, e.g. "name must be 1 to 255 characters".
 */
export function parseRequest<Schema extends z.ZodType>(schema: Schema, request: unknown): z.infer<Schema> {
  const unstorable = unstorableText(request);
  if (unstorable) throw RpcError.invalidArgument(`${unstorable.field} ${unstorable.problem}`);
  const result = schema.safeParse(request);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.');
  throw RpcError.invalidArgument(field ? `${field} ${issue.message}` : issue.message);
}

/**
 * The first string of a request (at any depth) that PostgreSQL cannot store as text (U+0000,
 * broken UTF-16), checked before any schema so that every call refuses it alike.
 */
function unstorableText(value: unknown, path: string[] = []): { field: string; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem ? { field: path.join('.') || 'request', problem } : undefined;
  }
  // Proto messages nest only as deep as their definitions.
  if (typeof value !== 'object' || value === null || path.length > 8) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const found = unstorableText(item, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

/** A positive int64 id (proto3 sends 0 for a missing one). */
export const id = () => z.number({ error: 'must be a positive integer' }).int('must be a positive integer').positive('must be a positive integer');

/** A display name: trimmed, 1 to 255 characters. */
export const displayName = () => z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(255, 'must be 1 to 255 characters');

export const email = () =>
  z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(254, 'must be at most 254 characters').pipe(z.email('must be a valid email address'));
