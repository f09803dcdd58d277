import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TestCertificate } from './tls';

export interface ReceivedRequest {
  path: string;
  method: string;
  headers: Record<string, string>;
  /** The raw body, as a receiver must use it to verify signatures. */
  body: Buffer;
  receivedAt: number;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Waits this long before answering (a slow receiver). */
  delayMs?: number;
  /** Answers only once this settles (a receiver held by the test). */
  until?: Promise<unknown>;
}

type Behaviour = (request: ReceivedRequest, index: number) => ReceiverAnswer;

/**
 * A real HTTPS receiver on 127.0.0.1. Every request is recorded; each path answers 200 unless a
 * behaviour is set for it. It can go down (connections refused) and come back on the same port.
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly counts = new Map<string, number>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private port = 0;

  private constructor(private readonly certificate: TestCertificate) {}

  static async start(certificate: TestCertificate): Promise<Receiver> {
    const receiver = new Receiver(certificate);
    await receiver.listen(0);
    return receiver;
  }

  /** `https://<host>:<port><path>`; the certificate is valid for localhost and the names it was made for. */
  url(path: string, host = 'localhost'): string {
    return `https://${host}:${this.port}${path}`;
  }

  /** How `path` answers from now on. */
  on(path: string, behaviour: Behaviour | ReceiverAnswer): void {
    this.behaviours.set(path, typeof behaviour === 'function' ? behaviour : () => behaviour);
  }

  at(path: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  /** Waits (bounded) until `done` holds for the requests so far. */
  async waitFor(done: (requests: ReceivedRequest[]) => boolean, timeoutMs = 20_000, what = 'the expected requests'): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (!done(this.requests)) {
      if (Date.now() > deadline) throw new Error(`receiver: timed out waiting for ${what} (${this.requests.length} requests so far)`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.requests;
  }

  /** Closes the port and every open connection: attempts now fail with "connection refused". */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    if (!this.server) await this.listen(this.port);
  }

  stop(): Promise<void> {
    return this.down();
  }

  private listen(port: number): Promise<void> {
    const server = createServer({ key: this.certificate.key, cert: this.certificate.cert, keepAliveTimeout: 5_000 }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0] as string;
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
        const request: ReceivedRequest = { path, method: req.method ?? '', headers, body: Buffer.concat(chunks), receivedAt: Date.now() };
        this.requests.push(request);
        const index = this.counts.get(path) ?? 0;
        this.counts.set(path, index + 1);
        const answer: ReceiverAnswer = (this.behaviours.get(path) ?? (() => ({ status: 200, body: 'ok' })))(request, index);
        const reply = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? '');
        };
        if (answer.until) void answer.until.finally(reply);
        else if (answer.delayMs) {
          // A receiver that goes down (or a client that gives up) drops the answer it was holding.
          const timer = setTimeout(reply, answer.delayMs);
          res.once('close', () => clearTimeout(timer));
        } else reply();
      });
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        this.server = server;
        this.port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }
}
