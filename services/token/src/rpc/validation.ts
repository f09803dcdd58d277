import { z } from '@worklane/config';
import { RpcError } from '@worklane/grpc';

/**
 * Validates a gRPC request; the first problem becomes INVALID_ARGUMENT with a message that
 * names the field, e.g. "name must be 1 to 255 characters".
 */
export function parseRequest<Schema extends z.ZodType>(schema: Schema, request: unknown): z.infer<Schema> {
  const result = schema.safeParse(request);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.');
  throw RpcError.invalidArgument(field ? `${field} ${issue.message}` : issue.message);
}

/** A positive int64 id (proto3 sends 0 for a missing one). */
export const id = () => z.number({ error: 'must be a positive integer' }).int('must be a positive integer').positive('must be a positive integer');

/** A display name: trimmed, 1 to 255 characters. */
export const displayName = () =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, 'must not be empty')
    .max(255, 'must be 1 to 255 characters');

export const email = () =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, 'must not be empty')
    .max(254, 'must be at most 254 characters')
    .pipe(z.email('must be a valid email address'));
