// A gRPC proxy for the gateway's integration tests: passes every call to the token service, except
// SyncRateLimits while `blocked`, which it answers UNAVAILABLE as an unreachable token service
// would. Authentication keeps working, so a test can watch the replicas limit on their own.
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

const SYNC_PATH = '/worklane.token.v1.TokenService/SyncRateLimits';
const UNAVAILABLE = '14';

export class SyncBlockingProxy {
  blocked = false;
  private readonly server: http2.Http2Server;
  private upstream: http2.ClientHttp2Session | undefined;

  private constructor(private readonly target: string) {
    this.server = http2.createServer();
    this.server.on('stream', (stream, headers) => this.forward(stream, headers));
  }

  /** Listens on a free loopback port in front of `target` (host:port of the token service). */
  static async start(target: string): Promise<SyncBlockingProxy> {
    const proxy = new SyncBlockingProxy(target);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** host:port to give the gateway as TOKEN_SERVICE_ADDR. */
  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.upstream?.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private session(): http2.ClientHttp2Session {
    if (!this.upstream || this.upstream.closed || this.upstream.destroyed) this.upstream = http2.connect(`http://${this.target}`);
    return this.upstream;
  }

  private forward(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    if (this.blocked && headers[':path'] === SYNC_PATH) {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': UNAVAILABLE, 'grpc-message': 'blocked by the test' }, { endStream: true });
      return;
    }
    const outgoing: http2.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(headers)) if (name !== ':authority' && name !== ':scheme' && value !== undefined) outgoing[name] = value;
    const call = this.session().request(outgoing);
    let trailers: http2.OutgoingHttpHeaders = {};
    call.on('response', (response) => {
      // A trailers-only answer (an error) carries its status in the headers and no body.
      if (response['grpc-status'] !== undefined) return stream.respond(response, { endStream: true });
      stream.respond(response, { waitForTrailers: true });
      call.pipe(stream);
    });
    call.on('trailers', (received) => (trailers = received));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    call.on('error', () => stream.destroyed || stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    stream.on('error', () => call.destroyed || call.close(http2.constants.NGHTTP2_CANCEL));
    stream.pipe(call);
  }
}
