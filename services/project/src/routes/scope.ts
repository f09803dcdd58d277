import type { Request } from 'express';
import { idParam, requireTeam } from '@worklane/http';

/**
 * The team of the path, which must be the caller's (403, whether or not it exists); a non-integer
 * team is 404 like any other malformed id.
 */
export function teamScope(req: Request): { teamId: number } {
  idParam(req, 'team');
  return { teamId: requireTeam(req).teamId };
}

export function organizationScope(req: Request): { teamId: number; organizationId: number } {
  const { teamId } = teamScope(req);
  return { teamId, organizationId: idParam(req, 'organization') };
}
