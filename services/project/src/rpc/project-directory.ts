import { z } from 'zod';
import { TeamQuotaExceededError, type Pool } from '@worklane/db';
import { RpcError, grpc, type UnaryHandler } from '@worklane/grpc';
import type { projectV1 } from '@worklane/proto';
import { createOrganization, listOrganizations, type Organization } from '../data/organizations';
import { findProject } from '../data/projects';

/** A positive int64 id; proto3 sends 0 for a missing one. */
const id = z.number().int().positive();

const createOrganizationRequest = z.object({ team_id: id, name: z.string().trim().min(1).max(255) });
const listOrganizationsRequest = z.object({ team_id: id });
const getProjectRequest = z.object({ team_id: id, organization_id: id, project_id: id });

/** INVALID_ARGUMENT naming the first bad field, e.g. "name must be 1 to 255 characters". */
function parseRequest<Schema extends z.ZodType>(schema: Schema, request: unknown, messages: Record<string, string>): z.infer<Schema> {
  const result = schema.safeParse(request);
  if (result.success) return result.data;
  const field = String(result.error.issues[0]?.path[0] ?? 'request');
  throw RpcError.invalidArgument(`${field} ${messages[field] ?? 'is invalid'}`);
}

const MESSAGES = {
  team_id: 'must be a positive integer',
  organization_id: 'must be a positive integer',
  project_id: 'must be a positive integer',
  name: 'must be 1 to 255 characters',
};

const toOrganization = (organization: Organization): projectV1.Organization => ({
  id: organization.id,
  team_id: organization.team_id,
  name: organization.name,
  created_at: organization.created_at,
});

type Handlers = {
  CreateOrganization: UnaryHandler<projectV1.CreateOrganizationRequest__Output, projectV1.Organization>;
  ListOrganizations: UnaryHandler<projectV1.ListOrganizationsRequest__Output, projectV1.ListOrganizationsResponse>;
  GetProject: UnaryHandler<projectV1.GetProjectRequest__Output, projectV1.Project>;
};

/** ProjectDirectory: organization set-up for the CLI and project lookups for the issue service. */
export function projectDirectoryHandlers(pool: Pool, quotas: { maxOrganizations: number }): Handlers {
  return {
    async CreateOrganization(request) {
      const { team_id, name } = parseRequest(createOrganizationRequest, request, MESSAGES);
      try {
        return toOrganization(await createOrganization(pool, team_id, name, quotas.maxOrganizations));
      } catch (error) {
        if (error instanceof TeamQuotaExceededError) throw new RpcError(grpc.status.RESOURCE_EXHAUSTED, error.message);
        throw error;
      }
    },
    async ListOrganizations(request) {
      const { team_id } = parseRequest(listOrganizationsRequest, request, MESSAGES);
      return { organizations: (await listOrganizations(pool, team_id)).map(toOrganization) };
    },
    async GetProject(request) {
      const { team_id, organization_id, project_id } = parseRequest(getProjectRequest, request, MESSAGES);
      const project = await findProject(pool, { teamId: team_id, organizationId: organization_id }, project_id);
      if (!project) throw RpcError.notFound('project not found');
      return { id: project.id, organization_id: project.organization_id, team_id, name: project.name, slug: project.slug };
    },
  };
}
