import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect, createSecureContext, type SecureContext, type SecureContextOptions, type TLSSocket } from 'node:tls';
import { Pool, errors, type buildConnector, type Dispatcher } from 'undici';

export interface PinnedDispatcherOptions {
  /** Time allowed to open the TCP connection. */
  connectTimeoutMs: number;
  /** Time allowed for the TLS handshake once connected; defaults to connectTimeoutMs. */
  tlsTimeoutMs?: number;
  /** Idle keep-alive connections are closed after this long. */
  keepAliveMs?: number;
  /** How many (origin, address) pools are kept; the least recently used beyond that are closed. */
  maxPools?: number;
  /** Connections kept per (origin, address) pool; undefined: as many as requests in flight. */
  connectionsPerPool?: number;
}

/** TLS sessions per server name, so a reconnect to the same receiver resumes instead of a full handshake. */
const sessions = new Map<string, Buffer>();
const MAX_SESSIONS = 1_000;

function rememberSession(name: string, session: Buffer): void {
  sessions.delete(name);
  sessions.set(name, session);
  if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value as string);
}

/**
 * The TLS settings every receiver connection starts from (the default trust store), made once:
 * without it each connection builds its own (about half a millisecond of the event loop each),
 * which an endpoint that keeps dropping connections would turn into steady work for everyone.
 */
let defaultContext: SecureContext | undefined;
function secureContextFor(tls: SecureContextOptions): SecureContext {
  if (Object.keys(tls).length > 0) return createSecureContext(tls);
  defaultContext ??= createSecureContext();
  return defaultContext;
}

class TlsHandshakeTimeoutError extends Error {
  readonly code = 'ERR_TLS_HANDSHAKE_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`TLS handshake not finished within ${timeoutMs} ms`);
    this.name = 'TlsHandshakeTimeoutError';
  }
}

/**
 * An undici connector that dials `address` whatever the URL's host resolves to now, while TLS
 * still sends the host name as SNI and verifies the certificate against it. This is what makes
 * the address check meaningful: a DNS answer that changes after the check (rebinding) cannot
 * redirect the connection.
 *
 * Opening the TCP connection and the TLS handshake have separate time limits, so a receiver that
 * accepts connections and then says nothing is given up on as soon as its handshake is overdue.
 */
export function pinnedConnector(address: string, connectTimeoutMs: number, tlsTimeoutMs = connectTimeoutMs, tls: SecureContextOptions = {}): buildConnector.connector {
  if (isIP(address) === 0) throw new Error(`not an IP address: ${address}`);
  const secureContext = secureContextFor(tls);
  return (options, callback) => {
    let done = false;
    const finish = (error: Error | null, socket?: Socket | TLSSocket) => {
      if (done) return;
      done = true;
      if (error) callback(error, null);
      else callback(null, socket!);
    };
    const isTls = options.protocol === 'https:';
    const port = Number(options.port) || (isTls ? 443 : 80);
    const tcp = netConnect({ host: address, port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 60_000 });
    let timer = setTimeout(() => {
      tcp.destroy();
      finish(new errors.ConnectTimeoutError(`connect timeout: ${address}:${port} did not accept within ${connectTimeoutMs} ms`));
    }, connectTimeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      tcp.destroy();
      finish(error);
    };
    tcp.once('error', fail);
    tcp.once('connect', () => {
      clearTimeout(timer);
      if (!isTls) {
        tcp.off('error', fail);
        finish(null, tcp);
        return;
      }
      // The name from the URL: SNI (never for an IP literal) and the certificate check.
      const hostname = options.hostname;
      const servername = options.servername || (isIP(hostname) === 0 ? hostname : undefined);
      const sessionKey = `${servername ?? hostname}:${port}`;
      const secure = tlsConnect({
        secureContext,
        socket: tcp,
        host: hostname,
        ...(servername ? { servername } : {}),
        ALPNProtocols: ['http/1.1'],
        session: sessions.get(sessionKey),
      });
      secure.on('session', (session: Buffer) => rememberSession(sessionKey, session));
      timer = setTimeout(() => {
        secure.destroy();
        fail(new TlsHandshakeTimeoutError(tlsTimeoutMs));
      }, tlsTimeoutMs);
      secure.once('error', fail);
      secure.once('secureConnect', () => {
        clearTimeout(timer);
        tcp.off('error', fail);
        secure.off('error', fail);
        finish(null, secure);
      });
    });
  };
}

/**
 * Connection pools keyed by (origin, checked address), so keep-alive connections are reused across
 * deliveries to the same receiver but never across a change of address.
 */
export class PinnedDispatchers {
  private readonly pools = new Map<string, Pool>();
  private readonly maxPools: number;

  constructor(private readonly options: PinnedDispatcherOptions) {
    this.maxPools = options.maxPools ?? 1_000;
  }

  /** A dispatcher for `origin` (`https://host:port`) whose every connection goes to `address`. */
  forAddress(origin: string, address: string): Dispatcher {
    const key = `${origin}|${address}`;
    let pool = this.pools.get(key);
    if (pool) {
      // Re-inserting keeps the map in least-recently-used order.
      this.pools.delete(key);
      this.pools.set(key, pool);
      return pool;
    }
    pool = new Pool(origin, {
      connect: pinnedConnector(address, this.options.connectTimeoutMs, this.options.tlsTimeoutMs),
      ...(this.options.connectionsPerPool ? { connections: this.options.connectionsPerPool } : {}),
      keepAliveTimeout: this.options.keepAliveMs ?? 30_000,
      keepAliveMaxTimeout: this.options.keepAliveMs ?? 30_000,
    });
    this.pools.set(key, pool);
    while (this.pools.size > this.maxPools) {
      const [oldestKey, oldest] = this.pools.entries().next().value as [string, Pool];
      this.pools.delete(oldestKey);
      void oldest.close().catch(() => {});
    }
    return pool;
  }

  /**
   * Whether a request to `origin` at `address` sent now would open a new connection: no pool yet,
   * or none of its connections idle while the pool may still open one. An estimate from the pool's
   * counts (requests dispatched in the same moment may share the one idle connection it saw).
   */
  opensConnection(origin: string, address: string): boolean {
    const pool = this.pools.get(`${origin}|${address}`);
    if (!pool) return true;
    const { free, connected } = pool.stats;
    return free === 0 && (this.options.connectionsPerPool === undefined || connected < this.options.connectionsPerPool);
  }

  get size(): number {
    return this.pools.size;
  }

  /** Closes every pool, letting requests in flight finish. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(pools.map((pool) => pool.close()));
  }
}
