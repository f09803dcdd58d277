// The pages of a team (/teams/:team/...): only for a signed-in member of that team. Each tab
// mounts its own pages: the overview, the API tokens and the webhooks.
import type { Router } from 'express';
import { pageContext, pageNotFound, sendPage } from '../context';
import type { ConsoleDeps } from '../deps';
import { noTeamsPage } from '../views/overview';
import { mountOverview } from './overview';
import { positiveId } from './params';
import { mountTokens } from './tokens';
import { mountWebhooks } from './webhooks';

export function mountTeamPages(router: Router, deps: ConsoleDeps): void {
  const { assets } = deps;

  router.get('/teams', (req, res) => {
    if (!req.viewer) return res.redirect(303, '/login');
    const first = req.viewer.memberships[0];
    if (first) return res.redirect(303, `/teams/${first.team_id}`);
    sendPage(res, 200, noTeamsPage(pageContext(req, assets)));
  });

  // Every page of a team: signed in, and a member of that team. Anyone else sees "not found",
  // whether or not the team exists.
  router.use('/teams/:team', (req, res, next) => {
    if (!req.viewer) {
      if (req.method === 'GET' || req.method === 'HEAD') return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
      return res.redirect(303, '/login');
    }
    const teamId = positiveId(req.params.team);
    const membership = req.viewer.memberships.find((candidate) => candidate.team_id === teamId);
    if (!membership) throw pageNotFound();
    req.team = membership;
    next();
  });

  mountOverview(router, deps);
  mountTokens(router, deps);
  mountWebhooks(router, deps);
}
