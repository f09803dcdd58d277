// The project service (a real process) while its PostgreSQL is unreachable: the API answers the
// one 503 of an unavailable dependency (service_unavailable, Retry-After), its gRPC directory
// UNAVAILABLE, its /readyz 503 while /healthz stays 200, and it recovers on its own once the
// database is back (docs/operations.md). The database sits behind a TCP relay the test cuts.
import { createGrpcClient, grpc, unaryCall } from '@worklane/grpc';
import { signIdentity } from '@worklane/http';
import { loadProto, type ProjectProto, type projectV1 } from '@worklane/proto';
import { signerOf, startSystem, startTcpRelay, throughRelay, type ServiceHandle, type System, type TcpRelay } from '@worklane/testing';

jest.setTimeout(120_000);

const RETRY_AFTER = '11';
const ORGANIZATIONS = '/api/v1/teams/1/organizations';

let system: System;
let relay: TcpRelay;
let project: ServiceHandle;
let directory: projectV1.ProjectDirectoryClient;

beforeAll(async () => {
  system = await startSystem({ services: [] });
  const database = new URL(system.databaseUrl);
  relay = await startTcpRelay({ host: database.hostname, port: Number(database.port || 5432) });
  project = await system.startService('project', { DATABASE_URL: throughRelay(system.databaseUrl, relay), UNAVAILABLE_RETRY_AFTER_SECONDS: RETRY_AFTER });
  const { ProjectDirectory } = loadProto<ProjectProto>('project').worklane.project.v1;
  directory = createGrpcClient(ProjectDirectory, project.grpcAddr!, { caller: 'issue', signingKey: signerOf(system.keys.signing, 'issue').key });
});

afterAll(async () => {
  directory?.close();
  await system?.stop();
  await relay?.close();
});

/** A request to the project service's API as the gateway forwards it. */
async function call(method: 'GET' | 'POST', body?: unknown) {
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...signIdentity(signerOf(system.keys.signing, 'gateway'), method, ORGANIZATIONS, { teamId: 1, userId: 1, tokenId: 1 }),
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${project.url}${ORGANIZATIONS}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
}

const probe = async (path: string) => (await fetch(`${project.url}${path}`)).status;

const lookUpProject = () =>
  unaryCall<projectV1.Project__Output>((metadata, options, done) => directory.GetProject({ team_id: 1, organization_id: 1, project_id: 1 }, metadata, options, done)).then(
    () => grpc.status.OK,
    (error: grpc.ServiceError) => error.code,
  );

async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('condition not met');
}

describe('the project service when its database is unreachable', () => {
  it('answers 503 with Retry-After, is not ready but alive, and recovers when the database is back', async () => {
    expect((await call('GET')).status).toBe(200);
    expect(await probe('/readyz')).toBe(200);
    expect(await lookUpProject()).toBe(grpc.status.NOT_FOUND);

    relay.cut();
    for (const response of [await call('GET'), await call('POST', { name: 'During the outage' })]) {
      expect(response).toEqual({ status: 503, retryAfter: RETRY_AFTER, body: { message: 'Service unavailable.', code: 'service_unavailable' } });
    }
    expect(await probe('/readyz')).toBe(503);
    expect(await probe('/healthz')).toBe(200);
    // Its callers (the issue service) turn this into their own 503.
    expect(await lookUpProject()).toBe(grpc.status.UNAVAILABLE);
    expect(project.logs()).toMatch(/a dependency is unavailable; answering 503/);
    expect(project.logs()).toMatch(/not ready/);

    relay.restore();
    await eventually(async () => (await call('GET')).status === 200);
    expect(await probe('/readyz')).toBe(200);
    expect((await call('POST', { name: 'After the outage' })).status).toBe(201);
    expect(await lookUpProject()).toBe(grpc.status.NOT_FOUND);
    expect(project.logs()).toMatch(/ready again/);
  });
});
