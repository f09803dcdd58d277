import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Name of the hidden form field that carries the CSRF token on every state-changing form. */
export const CSRF_FIELD = '_csrf';

/** True only when `given` is exactly `expected`, compared in constant time. */
export function csrfMatches(expected: string | undefined, given: unknown): boolean {
  if (!expected || typeof given !== 'string' || given.length === 0) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Before sign-in there is no session to hold a CSRF token, so the sign-in and sign-up forms use
 * a double-submit token: a random value in a cookie that must come back in the form. A page on
 * another site can neither read the cookie nor set it, so it cannot forge the pair.
 */
export const PRE_SESSION_COOKIE = 'worklane_login_csrf';

const TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

export function newPreSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The cookie's token when it is one of ours, so a page reload keeps the same pair. */
export function validPreSessionToken(value: string | undefined): string | undefined {
  return value && TOKEN_FORMAT.test(value) ? value : undefined;
}
