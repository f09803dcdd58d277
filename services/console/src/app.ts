import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Router } from 'express';
import { createServiceApp, HttpError } from '@worklane/http';
import { promClient, type Logger, type ServiceMetrics } from '@worklane/observability';
import type { Accounts } from './clients/accounts';
import type { ServiceApi } from './clients/services';
import { CSRF_FIELD, csrfMatches } from './csrf';
import { formExpired, pageContext, PageError, pageNotFound, sendPage } from './context';
import { ServiceUnavailableError } from './errors';
import { AttemptLimiter, type SignInLimits } from './rate-limit';
import { cookieOptions, mountAuth, SESSION_COOKIE, setSessionCookie } from './routes/auth';
import { mountTeamPages } from './routes/team';
import { noStore, parseCookies, securityHeaders } from './security';
import type { Assets } from './views/layout';
import { errorPage } from './views/pages';

export const PUBLIC_DIR = join(__dirname, '..', 'public');

export interface ConsoleOptions {
  accounts: Accounts;
  services: ServiceApi;
  logger: Logger;
  metrics: ServiceMetrics;
  isReady: () => boolean | Promise<boolean>;
  signupEnabled: boolean;
  /** Secure cookies even over plain HTTP (a TLS-terminating proxy that does not say so). */
  secureCookies: boolean;
  /**
   * express 'trust proxy': which proxies may name the client address and protocol (false: none,
   * the socket's peer is the client; a number: that many hops; addresses or subnets).
   */
  trustProxy: boolean | number | string | string[];
  /** Sign-in limits, enforced by the token service for every replica at once. */
  login: SignInLimits;
}

/** What the routes share: the options plus the throttles, counters and asset paths. */
export interface ConsoleDeps extends ConsoleOptions {
  assets: Assets;
  signups: AttemptLimiter;
  loginAttempts: promClient.Counter<'outcome'>;
}

/** Asset URLs carry a hash of their content, so a new build is fetched at once. */
function fingerprintAssets(): Assets {
  const url = (file: string) => {
    const hash = createHash('sha256').update(readFileSync(join(PUBLIC_DIR, file))).digest('hex').slice(0, 12);
    return `/assets/${file}?v=${hash}`;
  };
  return { css: url('console.css'), js: url('console.js') };
}

const SESSION_ID = /^[A-Za-z0-9_-]{16,256}$/;

/**
 * Finds the person behind the session cookie, with their teams. A cookie that no longer names a
 * live session is cleared; a live one is renewed, since each visit moves the idle expiry on.
 */
function loadViewer(deps: ConsoleDeps): RequestHandler {
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
const checkCsrf: RequestHandler = (req, res, next) => {
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

function pageErrors(deps: ConsoleDeps): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.headersSent) return void res.end();
    const context = pageContext(req, deps.assets);
    if (error instanceof PageError) {
      res.set(error.headers);
      return sendPage(res, error.status, errorPage(context, { status: error.status, title: error.title, message: error.message }));
    }
    if (error instanceof HttpError && error.status < 500) {
      return sendPage(res, error.status, errorPage(context, { status: error.status, title: 'Request not accepted', message: 'The request could not be understood. Reload the page and try again.' }));
    }
    if (error instanceof ServiceUnavailableError) {
      deps.logger.warn({ err: error.reason, service: error.service, url: req.originalUrl }, 'a service the console needs is unavailable');
      res.set('Retry-After', '5');
      return sendPage(
        res,
        503,
        errorPage(context, {
          status: 503,
          title: 'Worklane is not answering right now',
          message: `Part of Worklane (the ${error.service} service) did not answer in time. Wait a moment, then reload the page or try again.`,
        }),
      );
    }
    deps.logger.error({ err: error, method: req.method, url: req.originalUrl }, 'console request failed');
    sendPage(
      res,
      500,
      errorPage(context, { status: 500, title: 'Something went wrong on our side', message: 'The page could not be shown. The problem has been logged; please try again in a moment.' }),
    );
  };
}

function mountConsole(router: Router, deps: ConsoleDeps): void {
  router.use(securityHeaders);
  router.use('/assets', express.static(PUBLIC_DIR, { index: false, immutable: true, maxAge: '365d', fallthrough: true }));
  router.use(noStore);
  router.use(loadViewer(deps));
  router.use(checkCsrf);

  router.get('/', (req, res) => {
    const first = req.viewer?.memberships[0];
    res.redirect(303, req.viewer ? (first ? `/teams/${first.team_id}` : '/teams') : '/login');
  });
  mountAuth(router, deps);
  mountTeamPages(router, deps);

  router.use(() => {
    throw pageNotFound();
  });
  router.use(pageErrors(deps));
}

/** The console's express app: HTML pages over the token service and the services' APIs. */
export function createApp(options: ConsoleOptions): Express {
  const deps: ConsoleDeps = {
    ...options,
    assets: fingerprintAssets(),
    signups: new AttemptLimiter({ max: 10, windowMs: 60 * 60 * 1000 }),
    loginAttempts: new promClient.Counter({
      name: 'worklane_console_login_attempts_total',
      help: 'Console sign-in attempts by outcome (success, failure, throttled)',
      labelNames: ['outcome'],
      registers: [options.metrics.registry],
    }),
  };
  const app = createServiceApp({
    logger: options.logger,
    metrics: options.metrics,
    isReady: options.isReady,
    formBodies: true,
    bodyLimit: '64kb',
    routes: (router) => mountConsole(router, deps),
  });
  app.set('trust proxy', options.trustProxy);
  return app;
}
