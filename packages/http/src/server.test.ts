// The drain of closeHttpServer: a client's kept-alive connection goes on being answered after
// shutdown begins, each answer closing it, so no client meets a reset.
import { Agent, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeHttpServer, listen } from './server';

interface Reply {
  status: number;
  connection: string | undefined;
  reusedSocket: boolean;
}

function get(server: Server, agent: Agent, path = '/'): Promise<Reply> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res: IncomingMessage) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, reusedSocket: req.reusedSocket }));
    });
    req.once('error', reject);
    req.end();
  });
}

const openServers: Server[] = [];
const agents: Agent[] = [];

afterEach(async () => {
  for (const agent of agents.splice(0)) agent.destroy();
  for (const server of openServers.splice(0)) if (server.listening) await closeHttpServer(server);
});

async function serve(handler: Parameters<typeof listen>[0]): Promise<{ server: Server; agent: Agent }> {
  const server = await listen(handler, 0, '127.0.0.1');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  openServers.push(server);
  agents.push(agent);
  return { server, agent };
}

it('answers on a kept-alive connection during the drain, closing it, then stops once no connection is left', async () => {
  const { server, agent } = await serve((_req, res) => res.end('ok'));
  expect(await get(server, agent)).toMatchObject({ status: 200, connection: 'keep-alive', reusedSocket: false });

  // A drain far longer than the test: it can only end because the last connection closed.
  const closed = closeHttpServer(server, 600_000);
  const during = await get(server, agent);
  expect(during).toEqual({ status: 200, connection: 'close', reusedSocket: true });

  await closed;
  expect(server.listening).toBe(false);
});

it('asks a response still being written when the drain begins to close its connection', async () => {
  let answer: () => void = () => undefined;
  const { server, agent } = await serve((_req, res) => {
    answer = () => res.end('late');
  });
  const pending = get(server, agent);
  await new Promise<void>((resolve) => server.once('request', () => setImmediate(resolve)));

  const closed = closeHttpServer(server, 600_000);
  answer();
  expect(await pending).toMatchObject({ status: 200, connection: 'close' });
  await closed;
});

it('without a drain closes idle connections at once', async () => {
  const { server, agent } = await serve((_req, res) => res.end('ok'));
  await get(server, agent);
  await closeHttpServer(server, 0);
  expect(server.listening).toBe(false);
});
