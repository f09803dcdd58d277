import type { Router } from 'express';
import type { Pool } from '@worklane/db';
import { idParam, notFound, parseBody, resource } from '@worklane/http';
import { createProject, findProject, listProjects, updateProject, type OnSlugConflict } from '../data/projects';
import { createProjectInput, updateProjectInput } from '../domain/project-input';
import { organizationScope } from './scope';

const PROJECTS = '/api/v1/teams/:team/organizations/:organization/projects';

export function projectRoutes(router: Router, pool: Pool, onSlugConflict: OnSlugConflict): void {
  resource(router, PROJECTS, {
    get: async (req, res) => {
      const projects = await listProjects(pool, organizationScope(req));
      if (!projects) throw notFound();
      res.json({ data: projects });
    },
    post: async (req, res) => {
      const scope = organizationScope(req);
      const input = parseBody(createProjectInput, req.body ?? {});
      const project = await createProject(pool, scope, input, onSlugConflict);
      if (!project) throw notFound();
      res
        .status(201)
        .location(`/api/v1/teams/${scope.teamId}/organizations/${scope.organizationId}/projects/${project.id}`)
        .json(project);
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
      const changes = parseBody(updateProjectInput, req.body ?? {});
      const project = await updateProject(pool, scope, projectId, changes, onSlugConflict);
      if (!project) throw notFound();
      res.json(project);
    },
  });
}
