// The sign-in tab: sign in, sign out and (when enabled) sign up.
import type { Request, Response, Router } from 'express';
import { grpc } from '@worklane/grpc';
import { AccountRequestError, SignInThrottledError, type User } from '../clients/accounts';
import { formString, pageContext, safeNext, sendPage } from '../context';
import { CSRF_FIELD, PRE_SESSION_COOKIE, csrfMatches, newPreSessionToken, validPreSessionToken } from '../csrf';
import type { ConsoleDeps } from '../deps';
import { noticeFrom } from '../notices';
import { describeWait, signInThrottle } from '../rate-limit';
import { parseCookies } from '../security';
import { cookieOptions, SESSION_COOKIE, setSessionCookie } from '../session';
import { loginPage, signupPage, type FormErrors } from '../views/auth';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** The longest email address there can be (RFC 5321 path limit) and the longest password taken. */
const MAX_EMAIL_LENGTH = 254;
const MAX_PASSWORD_LENGTH = 1024;

/** The pre-session CSRF token of this browser, set as a cookie when it has none yet. */
function preSessionToken(req: Request, res: Response, deps: ConsoleDeps): string {
  const existing = validPreSessionToken(parseCookies(req.headers.cookie)[PRE_SESSION_COOKIE]);
  if (existing) return existing;
  const token = newPreSessionToken();
  res.cookie(PRE_SESSION_COOKIE, token, { ...cookieOptions(req, deps), maxAge: 2 * 60 * 60 * 1000 });
  return token;
}

function preSessionCsrfValid(req: Request): boolean {
  const cookie = validPreSessionToken(parseCookies(req.headers.cookie)[PRE_SESSION_COOKIE]);
  return csrfMatches(cookie, (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD]);
}

const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** Where a signed-in person lands: the page they asked for, else their first team. */
function landing(memberships: { team_id: number }[], next: string | undefined): string {
  if (next) return next;
  const first = memberships[0];
  return first ? `/teams/${first.team_id}` : '/teams';
}

export function mountAuth(router: Router, deps: ConsoleDeps): void {
  const { accounts, assets } = deps;

  router.get('/login', (req, res) => {
    if (req.viewer) return res.redirect(303, landing(req.viewer.memberships, safeNext(req.query.next)));
    const notice = noticeFrom(req.query.notice);
    sendPage(
      res,
      200,
      loginPage(pageContext(req, assets), { csrfToken: preSessionToken(req, res, deps), next: safeNext(req.query.next), signupEnabled: deps.signupEnabled, notice }),
    );
  });

  router.post('/login', async (req, res) => {
    const email = formString(req.body, 'email').trim();
    const password = formString(req.body, 'password');
    const next = safeNext(formString(req.body, 'next'));
    const render = (status: number, options: { errors?: FormErrors; notice?: { kind: 'error'; text: string } }) =>
      sendPage(
        res,
        status,
        loginPage(pageContext(req, assets), { csrfToken: preSessionToken(req, res, deps), next, signupEnabled: deps.signupEnabled, values: { email }, ...options }),
      );

    if (!preSessionCsrfValid(req)) {
      return render(403, { notice: { kind: 'error', text: 'Your sign-in form had expired. Please sign in again.' } });
    }
    const errors: FormErrors = {};
    // Over-long input is refused here, before it is looked up or becomes a throttle key.
    if (!email) errors.email = ['Enter your email address.'];
    else if (email.length > MAX_EMAIL_LENGTH) errors.email = [`Use at most ${MAX_EMAIL_LENGTH} characters.`];
    if (!password) errors.password = ['Enter your password.'];
    else if (password.length > MAX_PASSWORD_LENGTH) errors.password = ['Use at most 1,024 characters.'];
    if (Object.keys(errors).length > 0) return render(422, { errors });

    let user: User | undefined;
    try {
      user = await accounts.verifyPassword(email, password, signInThrottle(deps.login, clientAddress(req)));
    } catch (error) {
      if (!(error instanceof SignInThrottledError)) throw error;
      deps.loginAttempts.inc({ outcome: 'throttled' });
      res.set('Retry-After', String(error.retryAfterSeconds));
      return render(429, { notice: { kind: 'error', text: `Too many sign-in attempts. Wait ${describeWait(error.retryAfterSeconds)} and try again.` } });
    }
    if (!user) {
      deps.loginAttempts.inc({ outcome: 'failure' });
      return render(401, { notice: { kind: 'error', text: 'The email address or password is not right. Check them and try again.' } });
    }
    deps.loginAttempts.inc({ outcome: 'success' });
    // Signing in again replaces the session this browser had, rather than leaving it live.
    if (req.viewer) await accounts.deleteSession(req.viewer.sessionId);
    const session = await accounts.createSession(user.id);
    setSessionCookie(req, res, deps, session);
    res.clearCookie(PRE_SESSION_COOKIE, cookieOptions(req, deps));
    res.redirect(303, landing((await accounts.listMemberships(user.id)) ?? [], next));
  });

  router.post('/logout', async (req, res) => {
    // The CSRF check has run: only a form of ours reaches this with a session.
    if (req.viewer) await accounts.deleteSession(req.viewer.sessionId);
    res.clearCookie(SESSION_COOKIE, cookieOptions(req, deps));
    res.redirect(303, '/login?notice=signed-out');
  });

  if (!deps.signupEnabled) return;

  router.get('/signup', (req, res) => {
    if (req.viewer) return res.redirect(303, landing(req.viewer.memberships, undefined));
    sendPage(res, 200, signupPage(pageContext(req, assets), { csrfToken: preSessionToken(req, res, deps) }));
  });

  router.post('/signup', async (req, res) => {
    const values = {
      name: formString(req.body, 'name').trim(),
      email: formString(req.body, 'email').trim(),
      team: formString(req.body, 'team').trim(),
    };
    const password = formString(req.body, 'password');
    const render = (status: number, options: { errors?: FormErrors; notice?: { kind: 'error'; text: string } }) =>
      sendPage(res, status, signupPage(pageContext(req, assets), { csrfToken: preSessionToken(req, res, deps), values, ...options }));

    if (!preSessionCsrfValid(req)) return render(403, { notice: { kind: 'error', text: 'The form had expired. Please try again.' } });
    const errors: FormErrors = {};
    if (!values.name) errors.name = ['Enter your name.'];
    else if (values.name.length > 255) errors.name = ['Use at most 255 characters.'];
    if (!EMAIL.test(values.email) || values.email.length > 254) errors.email = ['Enter an email address like name@example.com.'];
    if (password.length < 8) errors.password = ['Use at least 8 characters.'];
    else if (password.length > 1024) errors.password = ['Use at most 1,024 characters.'];
    if (!values.team) errors.team = ['Enter a name for your team.'];
    else if (values.team.length > 255) errors.team = ['Use at most 255 characters.'];
    if (Object.keys(errors).length > 0) return render(422, { errors });

    const ip = clientAddress(req);
    const wait = deps.signups.retryAfterMs(ip);
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      res.set('Retry-After', String(seconds));
      return render(429, { notice: { kind: 'error', text: `Too many accounts were created from your network. Wait ${describeWait(seconds)} and try again.` } });
    }
    deps.signups.recordFailure(ip);
    let userId: number;
    try {
      userId = (await accounts.createUser(values.email, password, values.name)).id;
    } catch (error) {
      if (error instanceof AccountRequestError && error.code === grpc.status.ALREADY_EXISTS) {
        return render(422, { errors: { email: ['An account with this email address already exists. Sign in instead.'] } });
      }
      if (error instanceof AccountRequestError && error.code === grpc.status.INVALID_ARGUMENT) {
        return render(422, { notice: { kind: 'error', text: `The account could not be created: ${error.message}` } });
      }
      throw error;
    }
    await accounts.createTeam(values.team, userId);
    const session = await accounts.createSession(userId);
    setSessionCookie(req, res, deps, session);
    res.clearCookie(PRE_SESSION_COOKIE, cookieOptions(req, deps));
    res.redirect(303, landing((await accounts.listMemberships(userId)) ?? [], undefined));
  });
}
