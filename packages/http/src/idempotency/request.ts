import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN } from '@worklane/api-contract';
import { HttpError } from '../errors';

/** The request header (lower case, as node reads it) that names a POST, so that a retry of it is answered without doing it twice. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

const invalidKey = () =>
  new HttpError(400, `The Idempotency-Key header must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters.`, undefined, {}, 'idempotency_key_invalid');

/** The request's key: undefined without the header, 400 (`idempotency_key_invalid`) when it is malformed. */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers[IDEMPOTENCY_KEY_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > IDEMPOTENCY_KEY_MAX_LENGTH || !KEY.test(value)) throw invalidKey();
  return value;
}

/** JSON with the keys of every object sorted: the same for bodies that differ only in key order or spacing. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? '';
}

/** What makes two requests with one key the same: method, path, and the body as JSON means it (no body: empty). */
export function requestFingerprint(method: string, path: string, body: unknown): Buffer {
  return createHash('sha256')
    .update(`${method.toUpperCase()}\n${path}\n`)
    .update(body === undefined ? '' : canonicalJson(body))
    .digest();
}
