// The overview tab (/teams/:team): the team's organizations with their projects, and the most
// recent issues.
import type { Router } from 'express';
import { pageContext, sendPage } from '../context';
import type { ConsoleDeps } from '../deps';
import { ServiceUnavailableError } from '../errors';
import type { Issue, Project } from '../resources';
import { overviewPage } from '../views/overview';
import { apiData, apiOf, CONCURRENCY, mapLimit, teamOf } from './api-calls';

/** Bounds on the fan-out of one overview page. */
const OVERVIEW_MAX_ORGANIZATIONS = 50;
const OVERVIEW_MAX_PROJECTS_FOR_ISSUES = 25;
const OVERVIEW_RECENT_ISSUES = 10;

export function mountOverview(router: Router, deps: ConsoleDeps): void {
  const { services, assets, logger } = deps;

  router.get('/teams/:team', async (req, res) => {
    const api = apiOf(services, req);
    const organizations = (await apiData(api.GET('/teams/{team}/organizations', { params: { path: teamOf(req) } }))).data;
    const withProjects = await mapLimit(organizations.slice(0, OVERVIEW_MAX_ORGANIZATIONS), CONCURRENCY, async (organization) => ({
      organization,
      projects: (await apiData(api.GET('/teams/{team}/organizations/{organization}/projects', { params: { path: { ...teamOf(req), organization: organization.id } } }))).data,
    }));
    let recentIssues: { issue: Issue; project: Project }[] | undefined;
    try {
      // Projects are listed oldest first: the newest are the likeliest to hold recent issues.
      const projects = withProjects.flatMap(({ organization, projects: list }) => list.map((project) => ({ organization, project })));
      const lists = await mapLimit(projects.slice(-OVERVIEW_MAX_PROJECTS_FOR_ISSUES), CONCURRENCY, async ({ organization, project }) => {
        const path = { ...teamOf(req), organization: organization.id, project: project.id };
        const issues = (await apiData(api.GET('/teams/{team}/organizations/{organization}/projects/{project}/issues', { params: { path } }))).data;
        return issues.map((issue) => ({ issue, project }));
      });
      recentIssues = lists
        .flat()
        .sort((a, b) => (a.issue.created_at === b.issue.created_at ? b.issue.id - a.issue.id : a.issue.created_at < b.issue.created_at ? 1 : -1))
        .slice(0, OVERVIEW_RECENT_ISSUES);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableError)) throw error;
      logger.warn({ err: error.reason, service: error.service }, 'recent issues unavailable');
    }
    const apiBase = `${req.protocol}://${req.host}`;
    sendPage(res, 200, overviewPage(pageContext(req, assets, 'overview'), { organizations: withProjects, recentIssues, apiBase }));
  });
}
