import { createServer, type RequestListener, type Server } from 'node:http';

/**
 * Listens with keep-alive longer than any proxy in front of us keeps idle sockets, so a reused
 * connection is never closed under a request in flight.
 */
export function listen(app: RequestListener, port: number, host: string): Promise<Server> {
  const server = createServer(app);
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

/** Stops accepting connections, lets in-flight requests finish, then closes idle keep-alive sockets. */
export function closeHttpServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
    // Sockets that become idle after their last response are closed as they finish.
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    server.once('close', () => clearInterval(sweep));
  });
}
