import type { ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import type { TestCertificate } from './tls';

/**
 * silent: accepts TCP connections and never says a word (not even the TLS handshake);
 * hanging: completes TLS, reads the request and never answers; ok: answers 200 at once.
 */
export type EndpointMode = 'silent' | 'hanging' | 'ok';

/**
 * A receiver on 127.0.0.1 whose behaviour can be switched, for attacks on the sender: endpoints
 * that accept connections and then stall. It counts connections and the requests it holds.
 */
export class SwitchableEndpoint {
  /** TCP connections accepted so far. */
  connections = 0;
  /** Requests received so far (hanging or answered). */
  requests: { path: string; deliveryId: string }[] = [];
  private readonly held = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();

  private constructor(
    public mode: EndpointMode,
    private readonly tcp: TcpServer,
    private readonly https: HttpsServer,
  ) {}

  static async start(certificate: TestCertificate, mode: EndpointMode): Promise<SwitchableEndpoint> {
    const https = createHttpsServer({ key: certificate.key, cert: certificate.cert, keepAliveTimeout: 5_000 });
    const tcp = createTcpServer();
    const endpoint = new SwitchableEndpoint(mode, tcp, https);
    https.on('request', (req, res) => {
      req.resume();
      req.on('end', () => {
        endpoint.requests.push({ path: (req.url ?? '/').split('?')[0] as string, deliveryId: String(req.headers['x-webhook-delivery'] ?? '') });
        if (endpoint.mode === 'ok') {
          res.writeHead(200).end('ok');
          return;
        }
        endpoint.held.add(res);
        res.on('close', () => endpoint.held.delete(res));
      });
    });
    tcp.on('connection', (socket) => {
      endpoint.connections += 1;
      endpoint.sockets.add(socket);
      socket.on('close', () => endpoint.sockets.delete(socket));
      socket.on('error', () => {});
      if (endpoint.mode !== 'silent') https.emit('connection', socket);
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', () => resolve()));
    return endpoint;
  }

  url(path: string, host = 'localhost'): string {
    return `https://${host}:${(this.tcp.address() as AddressInfo).port}${path}`;
  }

  /** Requests received and not answered, still open. */
  get hanging(): number {
    return this.held.size;
  }

  /** Closes every connection (held requests end as resets); the port stays open. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async stop(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => this.tcp.close(() => resolve()));
    this.https.close();
  }
}
