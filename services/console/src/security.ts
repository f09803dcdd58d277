import type { RequestHandler } from 'express';

/**
 * Scripts and styles come only from our own static files (no inline code at all), nothing may
 * frame the console, and forms post only back to it.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/** Security headers on every response of the console, pages and assets alike. */
export const securityHeaders: RequestHandler = (req, res, next) => {
  res.set(SECURITY_HEADERS);
  // Only a response that arrived over HTTPS may pin HTTPS for the host.
  if (req.secure) res.set('Strict-Transport-Security', 'max-age=31536000');
  next();
};

/** Pages show team data, token values and secrets: no cache may keep them. */
export const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  next();
};

/** Cookies of the request, by name; a malformed pair is skipped rather than failing the request. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator < 1) continue;
    const name = pair.slice(0, separator).trim();
    let value = pair.slice(separator + 1).trim();
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      if (!(name in cookies)) cookies[name] = decodeURIComponent(value);
    } catch {
      // not percent-encoded correctly: not one of ours
    }
  }
  return cookies;
}
