/**
 * What the delivery log keeps of one attempt's exchange besides its body (stored once per
 * delivery): the headers sent and the headers received, each bounded in size and never holding a
 * credential. Signatures are no credential (they are of one body and expire with its timestamp);
 * a receiver's cookies, tokens and authorization headers are, so their values are not kept.
 */

/** Shown in place of a credential's value. */
export const REDACTED = '[redacted]';

/** The key of the note that says how many headers went past the bound. */
export const OMITTED_KEY = '[omitted]';

/** Names of headers that carry credentials, whatever the receiver calls them. */
const CREDENTIAL_NAME = /auth|cookie|token|secret|passw|session|credential|api-?key|private|bearer/i;

export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/** jsonb holds no NUL, and a receiver may send anything. */
const storable = (text: string) => text.replace(/\u0000/g, '\uFFFD');

/**
 * The headers as kept: values joined when repeated, credentials redacted, in the order given until
 * `maxBytes` of names and values; what does not fit is counted under OMITTED_KEY. Null for none.
 */
export function recordedHeaders(headers: Record<string, string | string[] | number | undefined> | undefined, maxBytes: number): Record<string, string> | null {
  if (!headers) return null;
  const kept: Record<string, string> = {};
  let bytes = 0;
  let omitted = 0;
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const value = isCredentialHeader(name) ? REDACTED : storable(Array.isArray(raw) ? raw.join(', ') : String(raw));
    const size = Buffer.byteLength(name) + Buffer.byteLength(value);
    if (omitted > 0 || bytes + size > maxBytes) {
      omitted += 1;
      continue;
    }
    kept[storable(name)] = value;
    bytes += size;
  }
  if (omitted > 0) kept[OMITTED_KEY] = `${omitted} more header${omitted === 1 ? '' : 's'} past the ${maxBytes}-byte bound`;
  return kept;
}

/** Bounds of what an attempt keeps of its exchange (DELIVERY_RESPONSE_EXCERPT_BYTES, DELIVERY_EXCHANGE_HEADERS_MAX_BYTES). */
export interface ExchangeLimits {
  responseExcerptBytes: number;
  headersMaxBytes: number;
}
