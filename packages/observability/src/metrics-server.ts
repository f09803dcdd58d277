import { createServer, type Server } from 'node:http';
import type { ServiceMetrics } from './metrics';

/**
 * The metrics listener every service starts on its own port (METRICS_PORT): `GET /metrics` in the
 * Prometheus text format and nothing else. The API ports never serve metrics, so they are not
 * reachable through the gateway or the ingress; only the scraper is let in on this port.
 */
export function createMetricsServer(metrics: Pick<ServiceMetrics, 'registry'>): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found.' }));
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Method Not Allowed.' }));
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Server Error.' }));
      },
    );
  });
}

/** Starts the metrics listener on `port` (0: any free port) and resolves once it listens. */
export function serveMetrics(metrics: Pick<ServiceMetrics, 'registry'>, port: number, host: string): Promise<Server> {
  const server = createMetricsServer(metrics);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** Stops the metrics listener, closing idle scrape connections at once. */
export function closeMetricsServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
}
