import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API token values: `wl_` + 30 random base62 characters (178 bits) + a 6-character base62 CRC32
 * of everything before it, like GitHub's tokens. The prefix makes leaked tokens easy to find
 * with secret scanners; the checksum lets us refuse a mistyped or made-up value without a
 * database lookup.
 */
export const TOKEN_PREFIX = 'wl_';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

/** Fixed-width base62 of an unsigned 32-bit number (62^6 > 2^32). */
export function base62Checksum(value: number): string {
  let remaining = value >>> 0;
  let digits = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    digits = ALPHABET[remaining % 62] + digits;
    remaining = Math.floor(remaining / 62);
  }
  return digits;
}

const checksumOf = (body: string) => base62Checksum(crc32(body));

/** Uniform base62 characters: bytes of 248 and above are dropped so that `% 62` has no bias. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A new token value. It is shown once; only `hashToken(value)` is stored. */
export function generateToken(): string {
  const body = TOKEN_PREFIX + randomBase62(RANDOM_LENGTH);
  return body + checksumOf(body);
}

/** True when the value has the token shape and its checksum matches. */
export function isWellFormedToken(value: string): boolean {
  if (!TOKEN_PATTERN.test(value)) return false;
  const split = value.length - CHECKSUM_LENGTH;
  return checksumOf(value.slice(0, split)) === value.slice(split);
}

/** The stored form of a token (and of a session secret): lower-case hex SHA-256. */
export function hashToken(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
