import type { Request, Router } from 'express';
import { createIssueSchema, updateIssueSchema } from '@worklane/api-contract';
import { listPageLimits } from '@worklane/config';
import {
  bodyOf,
  byId,
  createdAnswer,
  idParam,
  notFound,
  parseBody,
  readPage,
  requireTeam,
  resource,
  rowsToFetch,
  sendPage,
  validationFailed,
  type PageLimits,
} from '@worklane/http';
import type { ProjectDirectory, TeamMembers } from '../clients/directories';
import type { IssueStore, ProjectScope } from '../data/issues';
import { referencePrefix } from '../domain/issue';

export interface IssueRouteDeps {
  issues: IssueStore;
  projects: ProjectDirectory;
  members: TeamMembers;
  /** LIST_DEFAULT_LIMIT and LIST_MAX_LIMIT; their defaults when not given. */
  pageLimits?: PageLimits;
}

/** Issues newest first, paged by default (an extension list). */
const ISSUE_LIST = byId('issues');

export const ISSUES_PATH = '/api/v1/teams/:team/organizations/:organization/projects/:project/issues';

export function issueRoutes(router: Router, deps: IssueRouteDeps): void {
  const pageLimits = deps.pageLimits ?? listPageLimits();

  /** The caller's team must own the organization, which must own the project; otherwise 404. */
  async function projectOf(req: Request) {
    const identity = requireTeam(req);
    const organizationId = idParam(req, 'organization');
    const projectId = idParam(req, 'project');
    const project = await deps.projects.getProject(identity.teamId, organizationId, projectId);
    if (!project) throw notFound();
    const scope: ProjectScope = { teamId: identity.teamId, organizationId, projectId };
    return { identity, project, scope };
  }

  /** An assignee must belong to the issue's team. */
  async function checkAssignee(teamId: number, assignedTo: number | null | undefined) {
    if (typeof assignedTo !== 'number') return;
    if (!(await deps.members.isMember(teamId, assignedTo))) {
      throw validationFailed({ assigned_to: ['The selected assigned to is not a member of the team.'] });
    }
  }

  resource(router, ISSUES_PATH, {
    get: async (req, res) => {
      const page = readPage(req, ISSUE_LIST, pageLimits, 'always')!;
      const { scope } = await projectOf(req);
      const rows = await deps.issues.list(scope, { take: rowsToFetch(page), beforeId: page.after, maxBytes: page.maxBytes });
      sendPage(req, res, ISSUE_LIST, page, rows, (issue) => issue.id);
    },
    post: async (req, res) => {
      const { identity, project, scope } = await projectOf(req);
      const input = parseBody(createIssueSchema, bodyOf(req));
      await checkAssignee(identity.teamId, input.assigned_to);
      const answer = createdAnswer(req, res);
      answer.send(await deps.issues.create(scope, referencePrefix(project.name), identity.userId, input, answer.recordIn));
    },
  });

  resource(router, `${ISSUES_PATH}/:issue`, {
    get: async (req, res) => {
      const issueId = idParam(req, 'issue');
      const { scope } = await projectOf(req);
      const issue = await deps.issues.find(scope, issueId);
      if (!issue) throw notFound();
      res.json(issue);
    },
    patch: async (req, res) => {
      const issueId = idParam(req, 'issue');
      const { identity, scope } = await projectOf(req);
      const update = parseBody(updateIssueSchema, bodyOf(req));
      await checkAssignee(identity.teamId, update.assigned_to);
      const issue = await deps.issues.update(scope, issueId, update);
      if (!issue) throw notFound();
      res.json(issue);
    },
  });
}
