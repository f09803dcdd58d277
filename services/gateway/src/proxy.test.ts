// The forwarder's one retry: a request sent on a kept-alive connection that the service closed at
// that moment is sent again on a new connection, if sending it twice is harmless; otherwise 503.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createLogger } from '@worklane/observability';
import { createAgents, createServiceForwarder, type Agents } from './proxy';

/**
 * A service that answers the first request on each connection and, on the second, closes the
 * connection without reading it: what a client sees when a service closes an idle connection just
 * as a request goes out on it.
 */
async function closingService(): Promise<{ server: Server; requests: string[] }> {
  const requests: string[] = [];
  const served = new WeakMap<Socket, number>();
  const server = createServer((req, res) => {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    if (count > 1) return req.socket.destroy();
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    req.once('end', () => res.end(JSON.stringify({ ok: true })));
  });
  // It keeps idle connections far longer than any test: only the gateway's own timeout closes one.
  server.keepAliveTimeout = 600_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, requests };
}

/** A forwarder to `service`, as the gateway makes one per service. */
function forwarderTo(service: Server, agents: Agents) {
  const { port } = service.address() as AddressInfo;
  return createServiceForwarder({
    service: 'project',
    target: `http://127.0.0.1:${port}`,
    agents,
    timeoutMs: 5_000,
    retryAfterSeconds: 1,
    logger: createLogger('gateway', 'silent'),
  });
}

async function gatewayTo(service: Server, agents: Agents): Promise<Server> {
  const forward = forwarderTo(service, agents);
  const gateway = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => void forward(req, res, chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}));
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  return gateway;
}

function call(gateway: Server, method: string, headers: Record<string, string> = {}, body?: string): Promise<number> {
  const { port } = gateway.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: '/items', headers: { connection: 'close', ...headers } }, (res: IncomingMessage) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end(body);
  });
}

let service: { server: Server; requests: string[] };
let gateway: Server;
let agents: Agents;

beforeEach(async () => {
  service = await closingService();
  // One connection at a time, so the second request goes out on the first one's connection.
  agents = createAgents(60_000);
  agents.http.maxSockets = 1;
  gateway = await gatewayTo(service.server, agents);
  expect(await call(gateway, 'GET')).toBe(200);
});

afterEach(async () => {
  agents.destroy();
  await new Promise((resolve) => gateway.close(resolve));
  service.server.closeAllConnections();
  await new Promise((resolve) => service.server.close(resolve));
});

it('sends an idempotent request again on a new connection', async () => {
  expect(await call(gateway, 'GET')).toBe(200);
  expect(service.requests).toEqual(['GET /items', 'GET /items']);
});

it('sends a POST with an Idempotency-Key again', async () => {
  const status = await call(gateway, 'POST', { 'content-type': 'application/json', 'idempotency-key': 'k-1' }, '{"name":"x"}');
  expect(status).toBe(200);
  expect(service.requests).toEqual(['GET /items', 'POST /items']);
});

it('answers 503 to a POST without an Idempotency-Key rather than risk doing it twice', async () => {
  const status = await call(gateway, 'POST', { 'content-type': 'application/json' }, '{"name":"x"}');
  expect(status).toBe(503);
  expect(service.requests).toEqual(['GET /items']);
});

it('closes a connection left unused for its idle timeout itself', async () => {
  const quick = createAgents(100);
  try {
    const quickGateway = await gatewayTo(service.server, quick);
    expect(await call(quickGateway, 'GET')).toBe(200);
    const [socket] = Object.values(quick.http.freeSockets).flat();
    await new Promise((resolve) => socket!.once('close', resolve));
    expect(Object.values(quick.http.freeSockets).flat()).toHaveLength(0);
    await new Promise((resolve) => quickGateway.close(resolve));
  } finally {
    quick.destroy();
  }
});

describe('the headers a service gets', () => {
  it('are the client’s that keepHeader keeps, less hop-by-hop ones, then extraHeaders, with the Content-Length of the body read', async () => {
    let received: Record<string, string | string[] | undefined> = {};
    let leftAsItCame = false;
    const echo = createServer((req, res) => {
      received = req.headers;
      req.resume();
      req.once('end', () => res.end('{}'));
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const forward = forwarderTo(echo, agents);
    const front = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.once('end', () => {
        const before = { ...req.headers };
        void forward(req, res, {
          body: Buffer.concat(chunks),
          keepHeader: (name) => name !== 'authorization',
          extraHeaders: { 'x-worklane-team-id': '7', 'x-forwarded-for': '10.0.0.1' },
        });
        leftAsItCame = JSON.stringify(req.headers) === JSON.stringify(before);
      });
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const headers = { authorization: 'Bearer secret', 'keep-alive': 'timeout=5', 'x-forwarded-for': '192.0.2.1', 'x-custom': 'kept', 'content-type': 'application/json' };
      expect(await call(front, 'POST', headers, '{"name":"x"}')).toBe(200);
      expect(received).toMatchObject({ 'x-custom': 'kept', 'x-worklane-team-id': '7', 'x-forwarded-for': '10.0.0.1', 'content-length': '12', 'content-type': 'application/json' });
      expect(received.authorization).toBeUndefined();
      expect(received['keep-alive']).toBeUndefined();
      expect(leftAsItCame).toBe(true);
    } finally {
      await new Promise((resolve) => front.close(resolve));
      echo.closeAllConnections();
      await new Promise((resolve) => echo.close(resolve));
    }
  });
});
