// The session behind a request: the session cookie, the person it names (req.viewer) and the
// CSRF check every state-changing request passes.
import type { CookieOptions, Request, RequestHandler, Response } from 'express';
import type { Session } from './clients/accounts';
import { formExpired } from './context';
import { CSRF_FIELD, csrfMatches } from './csrf';
import type { ConsoleDeps } from './deps';
import { parseCookies } from './security';

export const SESSION_COOKIE = 'worklane_session';

export function cookieOptions(req: Request, deps: Pick<ConsoleDeps, 'secureCookies'>): CookieOptions {
  return { httpOnly: true, sameSite: 'lax', secure: deps.secureCookies || req.secure, path: '/' };
}

/** The session cookie lives as long as the session would if nothing else happened. */
export function setSessionCookie(req: Request, res: Response, deps: Pick<ConsoleDeps, 'secureCookies'>, session: Session): void {
  const expires = new Date(session.expires_at);
  res.cookie(SESSION_COOKIE, session.id, { ...cookieOptions(req, deps), ...(Number.isNaN(expires.getTime()) ? {} : { expires }) });
}

const SESSION_ID = /^[A-Za-z0-9_-]{16,256}$/;

/**
 * Finds the person behind the session cookie, with their teams. A cookie that no longer names a
 * live session is cleared; a live one is renewed, since each visit moves the idle expiry on.
 */
export function loadViewer(deps: ConsoleDeps): RequestHandler {
  return async (req, res, next) => {
    const sessionId = parseCookies(req.headers.cookie)[SESSION_COOKIE];
    if (!sessionId) return next();
    const session = SESSION_ID.test(sessionId) ? await deps.accounts.getSession(sessionId) : undefined;
    const memberships = session ? await deps.accounts.listMemberships(session.user_id) : undefined;
    if (!session || !memberships) {
      res.clearCookie(SESSION_COOKIE, cookieOptions(req, deps));
      return next();
    }
    setSessionCookie(req, res, deps, session);
    req.viewer = { sessionId, userId: session.user_id, csrfToken: session.csrf_token, memberships };
    next();
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Forms posted before there is a session; they carry their own double-submit token. */
const PRE_SESSION_FORMS = new Set(['/login', '/signup']);

/** Every state-changing request carries the session's CSRF token (sign-in forms check theirs). */
export const checkCsrf: RequestHandler = (req, res, next) => {
  if (SAFE_METHODS.has(req.method) || PRE_SESSION_FORMS.has(req.path)) return next();
  if (!req.viewer) {
    // Signing out with an expired session is already done; anything else needs signing in.
    if (req.path === '/logout') return next();
    return res.redirect(303, '/login');
  }
  const given = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
  if (!csrfMatches(req.viewer.csrfToken, given)) throw formExpired();
  next();
};
