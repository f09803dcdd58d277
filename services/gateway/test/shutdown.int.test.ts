// SIGTERM stops a process taking new work but lets the request it is serving finish. Each request
// is held open with `Expect: 100-continue` until the process has begun shutting down (its port
// refuses connections), then completed: no timing decides the outcome.
import { Agent, request } from 'node:http';
import { api, bootstrapTeam, signerOf, startSystem, type BootstrapResult, type System } from '@worklane/testing';
import { eventually, holdRequest, signed, waitUntilRefused } from './support';

jest.setTimeout(180_000);

let system: System;
let team: BootstrapResult;

const projectsPath = () => `/api/v1/teams/${team.team_id}/organizations/${team.organization_id}/projects`;

beforeAll(async () => {
  system = await startSystem({ services: ['token', 'project', 'gateway'] });
  team = await bootstrapTeam(system);
});

afterAll(async () => {
  await system?.stop();
});

async function listedNames(): Promise<string[]> {
  const listed = await api(system, team.token).get(projectsPath().replace('/api/v1', ''));
  return listed.body.data.map((project: { name: string }) => project.name);
}

it('lets a request in flight at the project service finish after SIGTERM', async () => {
  const project = system.services.project!;
  const path = projectsPath();
  const identity = signed(signerOf(system.keys.signing, 'gateway'), 'POST', path, { teamId: team.team_id, userId: team.user_id, tokenId: team.token_id });
  const held = await holdRequest(project.httpPort, 'POST', path, identity, JSON.stringify({ name: 'Finished By The Project Service' }));

  const exited = project.stop('SIGTERM');
  await waitUntilRefused(project.httpPort);
  const reply = await held.finish();

  expect(reply.status).toBe(201);
  expect(reply.body).toMatchObject({ name: 'Finished By The Project Service' });
  expect(await exited).toEqual({ code: 0, signal: null });

  await project.restart();
  expect(await listedNames()).toContain('Finished By The Project Service');
});

it('lets a request in flight at the gateway finish after SIGTERM', async () => {
  const gateway = system.services.gateway!;
  const held = await holdRequest(gateway.httpPort, 'POST', projectsPath(), { Authorization: `Bearer ${team.token}` }, JSON.stringify({ name: 'Finished By The Gateway' }));

  const exited = gateway.stop('SIGTERM');
  await waitUntilRefused(gateway.httpPort);
  const reply = await held.finish();

  expect(reply.status).toBe(201);
  expect(reply.body).toMatchObject({ name: 'Finished By The Gateway' });
  expect(await exited).toEqual({ code: 0, signal: null });

  await gateway.restart();
  expect(await listedNames()).toContain('Finished By The Gateway');
});

it("answers a client's kept-alive connection during the drain, closing it, so the client moves on without a reset", async () => {
  // A drain longer than the test: the request below can only be answered by the drain. (It does
  // not end early here: the harness's own readiness checks left an idle connection, as any client may.)
  const gateway = await system.startService('gateway', { SHUTDOWN_DRAIN_MS: '300000', SHUTDOWN_TIMEOUT_MS: '600000' });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const listPath = projectsPath();
  try {
    expect(await getOn(agent, gateway.httpPort, listPath)).toMatchObject({ status: 200, connection: 'keep-alive', reusedSocket: false });

    // Resolves when the process exits (after the SIGKILL below).
    void gateway.stop('SIGTERM');
    // Unready once the drain has begun; each probe comes on a connection of its own, closed by its answer.
    await eventually(async () => (await getOn(new Agent({ keepAlive: false }), gateway.httpPort, '/readyz')).status === 503);

    const during = await getOn(agent, gateway.httpPort, listPath);
    expect(during).toEqual({ status: 200, connection: 'close', reusedSocket: true });
  } finally {
    agent.destroy();
    await gateway.kill();
  }
});

/** A GET with the team's token on `agent`'s connection to `port`. */
function getOn(agent: Agent, port: number, path: string): Promise<{ status: number; connection: string | undefined; reusedSocket: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${team.token}` } }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, reusedSocket: req.reusedSocket }));
    });
    req.once('error', reject);
    req.end();
  });
}
