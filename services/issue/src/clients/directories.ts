import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { HttpError } from '@worklane/http';
import { loadProto, type ProjectProto, type TokenProto } from '@worklane/proto';

/** The project an issue belongs to, as the project service knows it. */
export interface ProjectSummary {
  id: number;
  organizationId: number;
  teamId: number;
  name: string;
}

export interface ProjectDirectory {
  /** Undefined unless the project is in the organization and the organization in the team. */
  getProject(teamId: number, organizationId: number, projectId: number): Promise<ProjectSummary | undefined>;
}

export interface TeamMembers {
  isMember(teamId: number, userId: number): Promise<boolean>;
}

/** A dependency that does not answer is the client's 503, not our 500. */
function unavailable(error: unknown): never {
  const code = (error as grpc.ServiceError)?.code;
  if (code === grpc.status.UNAVAILABLE || code === grpc.status.DEADLINE_EXCEEDED || code === grpc.status.RESOURCE_EXHAUSTED) {
    throw new HttpError(503, 'Service temporarily unavailable.', undefined, { 'Retry-After': '1' });
  }
  throw error;
}

const isNotFound = (error: unknown) => (error as grpc.ServiceError)?.code === grpc.status.NOT_FOUND;

export interface DirectoryOptions {
  caller: string;
  signingKey: string;
}

/** ProjectDirectory.GetProject on the project service's internal gRPC. */
export function grpcProjectDirectory(address: string, options: DirectoryOptions): ProjectDirectory & { close(): void } {
  const { ProjectDirectory } = loadProto<ProjectProto>('project').worklane.project.v1;
  const client = createGrpcClient(ProjectDirectory, address, options);
  return {
    async getProject(teamId, organizationId, projectId) {
      try {
        const project = await unaryCall<{ id: number; organization_id: number; team_id: number; name: string }>((metadata, callOptions, done) =>
          client.GetProject({ team_id: teamId, organization_id: organizationId, project_id: projectId }, metadata, callOptions, done),
        );
        return { id: project.id, organizationId: project.organization_id, teamId: project.team_id, name: project.name };
      } catch (error) {
        if (isNotFound(error)) return undefined;
        return unavailable(error);
      }
    },
    close: () => client.close(),
  };
}

/** Team membership from the token service's AccountService, to check an assignee. */
export function grpcTeamMembers(address: string, options: DirectoryOptions): TeamMembers & { close(): void } {
  const { AccountService } = loadProto<TokenProto>('token').worklane.token.v1;
  const client = createGrpcClient(AccountService, address, options);
  return {
    async isMember(teamId, userId) {
      try {
        const response = await unaryCall<{ memberships: { team_id: number }[] }>((metadata, callOptions, done) =>
          client.ListTeamsForUser({ user_id: userId }, metadata, callOptions, done),
        );
        return response.memberships.some((membership) => membership.team_id === teamId);
      } catch (error) {
        if (isNotFound(error)) return false;
        return unavailable(error);
      }
    },
    close: () => client.close(),
  };
}
