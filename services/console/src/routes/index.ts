// Every page of the console, in the order a request meets them: security headers, static assets,
// the session and its CSRF check, then the tabs (sign-in, the team pages), the not-found page and
// the error pages.
import express, { type Router } from 'express';
import { PUBLIC_DIR } from '../assets';
import { pageNotFound } from '../context';
import type { ConsoleDeps } from '../deps';
import { pageErrors } from '../page-errors';
import { noStore, securityHeaders } from '../security';
import { checkCsrf, loadViewer } from '../session';
import { mountAuth } from './auth';
import { mountTeamPages } from './team';

export function mountConsole(router: Router, deps: ConsoleDeps): void {
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
