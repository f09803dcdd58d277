import type { Router } from 'express';
import { createProjectInput, updateProjectInput } from '@worklane/api-contract';
import type { Pool } from '@worklane/db';
import {
  bodyOf,
  byId,
  createdAnswer,
  idParam,
  notFound,
  parseBody,
  readPage,
  resource,
  rowsToFetch,
  sendPage,
  streamWholeList,
  withQuotaAnswer,
  type PageLimits,
} from '@worklane/http';
import { createProject, findProject, listProjects, updateProject, type OnSlugConflict, type Project } from '../data/projects';
import { organizationScope } from './scope';

const PROJECTS = '/api/v1/teams/:team/organizations/:organization/projects';

/** Projects in creation order: the whole set unless `limit` or `cursor` asks for a page. */
const PROJECT_LIST = byId('projects');

export interface ProjectRouteDeps {
  pool: Pool;
  onSlugConflict: OnSlugConflict;
  pageLimits: PageLimits;
  /** TEAM_MAX_PROJECTS. */
  maxProjects: number;
}

export function projectRoutes(router: Router, deps: ProjectRouteDeps): void {
  const { pool, onSlugConflict } = deps;
  resource(router, PROJECTS, {
    get: async (req, res) => {
      const scope = organizationScope(req);
      const page = readPage(req, PROJECT_LIST, deps.pageLimits, 'on-request');
      if (!page) {
        const found = await streamWholeList<Project, number>(
          res,
          (afterId, take, maxBytes) => listProjects(pool, scope, { take, afterId, maxBytes }),
          (project) => project.id,
          { maxBytes: deps.pageLimits.maxBytes },
        );
        if (!found) throw notFound();
        return;
      }
      const projects = await listProjects(pool, scope, { take: rowsToFetch(page), afterId: page.after, maxBytes: page.maxBytes });
      if (!projects) throw notFound();
      sendPage(req, res, PROJECT_LIST, page, projects, (project) => project.id);
    },
    post: async (req, res) => {
      const scope = organizationScope(req);
      const input = parseBody(createProjectInput, bodyOf(req));
      const answer = createdAnswer(req, res, (project: Project) => `/api/v1/teams/${scope.teamId}/organizations/${scope.organizationId}/projects/${project.id}`);
      const project = await withQuotaAnswer(() => createProject(pool, scope, input, deps.maxProjects, onSlugConflict, answer.recordIn));
      if (!project) throw notFound();
      answer.send(project);
    },
  });

  resource(router, `${PROJECTS}/:project`, {
    get: async (req, res) => {
      const project = await findProject(pool, organizationScope(req), idParam(req, 'project'));
      if (!project) throw notFound();
      res.json(project);
    },
    patch: async (req, res) => {
      const scope = organizationScope(req);
      const projectId = idParam(req, 'project');
      const changes = parseBody(updateProjectInput, bodyOf(req));
      const project = await updateProject(pool, scope, projectId, changes, onSlugConflict);
      if (!project) throw notFound();
      res.json(project);
    },
  });
}
