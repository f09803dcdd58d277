import type { KeyObject } from 'node:crypto';
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { DependencyUnavailableError } from '@worklane/http';
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

/**
 * A service that does not answer is the client's 503 (with Retry-After, from the app's error
 * handler), not our 500; any other failure stays what it is.
 */
function unavailable(service: string, error: unknown): never {
  const code = (error as grpc.ServiceError)?.code;
  if (code === grpc.status.UNAVAILABLE || code === grpc.status.DEADLINE_EXCEEDED || code === grpc.status.RESOURCE_EXHAUSTED) {
    throw new DependencyUnavailableError(service, error);
  }
  throw error;
}

const isNotFound = (error: unknown) => (error as grpc.ServiceError)?.code === grpc.status.NOT_FOUND;

export interface DirectoryOptions {
  caller: string;
  signingKey: KeyObject;
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
        return unavailable('project service', error);
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
        return unavailable('token service', error);
      }
    },
    close: () => client.close(),
  };
}

/**
 * Remembers projects that were found for `ttlMs`. A project never changes organization or team and
 * cannot be deleted, so a remembered answer can only be out of date in its name, which feeds the
 * prefix of new reference codes: a rename racing an issue create within that second is no
 * different from the race the two requests would have anyway. Projects not found are never
 * remembered, so a project is usable the moment it exists.
 */
export function rememberingProjectDirectory(directory: ProjectDirectory, ttlMs: number, maxEntries = 10_000, now = () => Date.now()): ProjectDirectory {
  const remembered = new Map<string, { project: ProjectSummary; until: number }>();
  return {
    async getProject(teamId, organizationId, projectId) {
      const key = `${teamId}/${organizationId}/${projectId}`;
      const entry = remembered.get(key);
      if (entry && entry.until > now()) return entry.project;
      remembered.delete(key);
      const project = await directory.getProject(teamId, organizationId, projectId);
      if (project) {
        remembered.set(key, { project, until: now() + ttlMs });
        if (remembered.size > maxEntries) remembered.delete(remembered.keys().next().value as string);
      }
      return project;
    },
  };
}
