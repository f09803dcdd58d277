// ProjectDirectory over real gRPC: what the CLI's bootstrap and the issue service rely on.
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { loadProto, type ProjectProto, type projectV1 } from '@worklane/proto';
import { signerOf } from '@worklane/testing';
import { startDirectProjectService, type DirectProjectService } from './support/direct';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

let service: DirectProjectService;
let client: projectV1.ProjectDirectoryClient;
let cli: projectV1.ProjectDirectoryClient;
let unsigned: projectV1.ProjectDirectoryClient;
let port: number;

beforeAll(async () => {
  service = await startDirectProjectService();
  port = await service.app.grpc.listen('127.0.0.1', 0);
  const { ProjectDirectory } = loadProto<ProjectProto>('project').worklane.project.v1;
  // The CLI administers organizations; the issue service looks projects up.
  client = createGrpcClient(ProjectDirectory, `127.0.0.1:${port}`, { caller: 'issue', signingKey: signerOf(service.keys, 'issue').key });
  cli = createGrpcClient(ProjectDirectory, `127.0.0.1:${port}`, { caller: 'cli', signingKey: signerOf(service.keys, 'cli').key });
  unsigned = new ProjectDirectory(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  cli?.close();
  unsigned?.close();
  await service?.app.grpc.shutdown();
  await service?.stop();
});

const createOrganization = (request: projectV1.CreateOrganizationRequest) =>
  unaryCall<projectV1.Organization__Output>((metadata, options, done) => cli.CreateOrganization(request, metadata, options, done));
const listOrganizations = (request: projectV1.ListOrganizationsRequest) =>
  unaryCall<projectV1.ListOrganizationsResponse__Output>((metadata, options, done) => cli.ListOrganizations(request, metadata, options, done));
const getProject = (request: projectV1.GetProjectRequest) => unaryCall<projectV1.Project__Output>((metadata, options, done) => client.GetProject(request, metadata, options, done));

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => grpc.status.OK,
    (error: grpc.ServiceError) => error.code,
  );

describe('ProjectDirectory', () => {
  it('creates and lists organizations of a team', async () => {
    const created = await createOrganization({ team_id: 41, name: '  Bootstrap org  ' });
    expect(created).toMatchObject({ team_id: 41, name: 'Bootstrap org' });
    expect(created.created_at).toMatch(TIMESTAMP);
    await createOrganization({ team_id: 42, name: 'Other' });
    const second = await createOrganization({ team_id: 41, name: 'Second' });
    expect((await listOrganizations({ team_id: 41 })).organizations.map((o) => o.id)).toEqual([created.id, second.id]);
  });

  it('shares organizations with the HTTP API', async () => {
    const created = await createOrganization({ team_id: 43, name: 'Shared' });
    const listed = await service.as(43).get('/api/v1/teams/43/organizations');
    expect(listed.body.data).toEqual([expect.objectContaining({ id: created.id, name: 'Shared', created_at: created.created_at })]);
  });

  it('finds a project only through its organization and team', async () => {
    const organization = await createOrganization({ team_id: 44, name: 'Lookups' });
    const sibling = await createOrganization({ team_id: 44, name: 'Sibling' });
    const elsewhere = await createOrganization({ team_id: 45, name: 'Elsewhere' });
    const project = (await service.as(44).post(`/api/v1/teams/44/organizations/${organization.id}/projects`, { name: 'Backend API' })).body;

    await expect(getProject({ team_id: 44, organization_id: organization.id, project_id: project.id })).resolves.toEqual({
      id: project.id,
      organization_id: organization.id,
      team_id: 44,
      name: 'Backend API',
      slug: 'backend-api',
    });
    for (const request of [
      { team_id: 45, organization_id: organization.id, project_id: project.id },
      { team_id: 45, organization_id: elsewhere.id, project_id: project.id },
      { team_id: 44, organization_id: sibling.id, project_id: project.id },
      { team_id: 44, organization_id: organization.id, project_id: project.id + 1000 },
    ]) {
      expect(await codeOf(getProject(request))).toBe(grpc.status.NOT_FOUND);
    }
  });

  it('refuses malformed requests with INVALID_ARGUMENT', async () => {
    expect(await codeOf(createOrganization({ team_id: 0, name: 'x' }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await codeOf(createOrganization({ team_id: 1, name: '   ' }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await codeOf(createOrganization({ team_id: 1, name: 'x'.repeat(256) }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await codeOf(listOrganizations({ team_id: -3 }))).toBe(grpc.status.INVALID_ARGUMENT);
    expect(await codeOf(getProject({ team_id: 1, organization_id: 0, project_id: 1 }))).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('refuses a caller that does not sign its calls', async () => {
    const call = unaryCall<projectV1.ListOrganizationsResponse__Output>((metadata, options, done) => unsigned.ListOrganizations({ team_id: 41 }, metadata, options, done));
    expect(await codeOf(call)).toBe(grpc.status.UNAUTHENTICATED);
  });

  it('accepts a method only from its callers, each signing with its own key', async () => {
    const { ProjectDirectory } = loadProto<ProjectProto>('project').worklane.project.v1;
    const address = `127.0.0.1:${port}`;
    // The issue service may look projects up, not create organizations.
    const byIssue = unaryCall<projectV1.Organization__Output>((metadata, options, done) =>
      client.CreateOrganization({ team_id: 41, name: 'Not allowed' }, metadata, options, done),
    );
    expect(await codeOf(byIssue)).toBe(grpc.status.PERMISSION_DENIED);
    // The delivery service's key signing under the CLI's name is not the CLI.
    const posing = createGrpcClient(ProjectDirectory, address, { caller: 'cli', signingKey: signerOf(service.keys, 'delivery').key });
    try {
      const call = unaryCall<projectV1.Organization__Output>((metadata, options, done) => posing.CreateOrganization({ team_id: 41, name: 'Forged' }, metadata, options, done));
      expect(await codeOf(call)).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      posing.close();
    }
  });
});
