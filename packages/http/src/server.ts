import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';

/** How often a drain looks whether its connections are all gone, and closes idle ones at the end. */
const SWEEP_INTERVAL_MS = 100;

/** The responses each server is still writing, so a drain can ask them to close their connection. */
const unfinished = new WeakMap<Server, Set<ServerResponse>>();
/** Servers in their drain: every response closes its connection. */
const draining = new WeakSet<Server>();

/**
 * Listens with keep-alive longer than any proxy in front of us keeps idle sockets, so a reused
 * connection is never closed under a request in flight.
 */
export function listen(app: RequestListener, port: number, host: string): Promise<Server> {
  const responses = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    if (draining.has(server)) res.setHeader('connection', 'close');
    else {
      responses.add(res);
      res.once('close', () => responses.delete(res));
    }
    app(req, res);
  });
  unfinished.set(server, responses);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * Stops a server without breaking a request a client is sending. First the drain, up to
 * `drainMs`: the server goes on answering on its open connections, and every response closes its
 * connection (`Connection: close`), so each client moves to another replica after its next
 * answer; it ends early once no connection is left. Then the server stops listening, lets
 * in-flight requests finish, and closes connections as they become idle.
 *
 * Closing an idle kept-alive connection races with a client that is sending on it at that moment
 * (the client sees a reset). The drain leaves that race only to a client that used no connection
 * for the whole drain; one that closes its idle connections sooner than `drainMs` (as the gateway
 * does, UPSTREAM_IDLE_TIMEOUT_MS) never meets it.
 */
export async function closeHttpServer(server: Server, drainMs = 0): Promise<void> {
  draining.add(server);
  for (const res of unfinished.get(server) ?? []) if (!res.headersSent) res.setHeader('connection', 'close');
  if (drainMs > 0) await untilNoConnections(server, drainMs);
  await new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Sockets that become idle after their last response are closed as they finish.
    const sweep = setInterval(() => server.closeIdleConnections(), SWEEP_INTERVAL_MS);
    server.once('close', () => clearInterval(sweep));
  });
}

/** Resolves once the server has no open connection, or after `limitMs`. */
function untilNoConnections(server: Server, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  return new Promise((resolve) => {
    const look = () =>
      server.getConnections((error, count) => {
        if (error || count === 0 || Date.now() >= deadline) resolve();
        else setTimeout(look, Math.min(SWEEP_INTERVAL_MS, deadline - Date.now()));
      });
    look();
  });
}
