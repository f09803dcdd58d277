import type { Router } from 'express';
import type { Pool } from '@worklane/db';
import { parseBody, resource } from '@worklane/http';
import { createOrganization, listOrganizations } from '../data/organizations';
import { createOrganizationInput } from '../domain/project-input';
import { teamScope } from './scope';

export function organizationRoutes(router: Router, pool: Pool): void {
  resource(router, '/api/v1/teams/:team/organizations', {
    get: async (req, res) => {
      const { teamId } = teamScope(req);
      res.json({ data: await listOrganizations(pool, teamId) });
    },
    post: async (req, res) => {
      const { teamId } = teamScope(req);
      const input = parseBody(createOrganizationInput, req.body ?? {});
      res.status(201).json(await createOrganization(pool, teamId, input.name));
    },
  });
}
