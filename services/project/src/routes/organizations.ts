import type { Router } from 'express';
import { createOrganizationInput } from '@worklane/api-contract';
import type { Pool } from '@worklane/db';
import { bodyOf, byId, createdAnswer, parseBody, readPage, resource, rowsToFetch, sendPage, withQuotaAnswer, type PageLimits } from '@worklane/http';
import { createOrganization, listOrganizations } from '../data/organizations';
import { teamScope } from './scope';

export interface OrganizationRouteDeps {
  pool: Pool;
  pageLimits: PageLimits;
  /** TEAM_MAX_ORGANIZATIONS. */
  maxOrganizations: number;
}

/** Organizations in creation order, paged by default (an extension list). */
const ORGANIZATIONS = byId('organizations');

export function organizationRoutes(router: Router, deps: OrganizationRouteDeps): void {
  const { pool } = deps;
  resource(router, '/api/v1/teams/:team/organizations', {
    get: async (req, res) => {
      const { teamId } = teamScope(req);
      const page = readPage(req, ORGANIZATIONS, deps.pageLimits, 'always')!;
      const rows = await listOrganizations(pool, teamId, { take: rowsToFetch(page), afterId: page.after });
      sendPage(req, res, ORGANIZATIONS, page, rows, (organization) => organization.id);
    },
    post: async (req, res) => {
      const { teamId } = teamScope(req);
      const input = parseBody(createOrganizationInput, bodyOf(req));
      const answer = createdAnswer(req, res);
      answer.send(await withQuotaAnswer(() => createOrganization(pool, teamId, input.name, deps.maxOrganizations, answer.recordIn)));
    },
  });
}
