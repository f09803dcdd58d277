import { isIP } from 'node:net';
import { Pool, buildConnector, type Dispatcher } from 'undici';

export interface PinnedDispatcherOptions {
  /** Time allowed to open the TCP connection and finish the TLS handshake. */
  connectTimeoutMs: number;
  /** Idle keep-alive connections are closed after this long. */
  keepAliveMs?: number;
  /** How many (origin, address) pools are kept; the least recently used beyond that are closed. */
  maxPools?: number;
}

/**
 * An undici connector that dials `address` whatever the URL's host resolves to now, while TLS
 * still sends the host name as SNI and verifies the certificate against it. This is what makes
 * the address check meaningful: a DNS answer that changes after the check (rebinding) cannot
 * redirect the connection.
 */
export function pinnedConnector(address: string, connectTimeoutMs: number): buildConnector.connector {
  if (isIP(address) === 0) throw new Error(`not an IP address: ${address}`);
  const connect = buildConnector({ timeout: connectTimeoutMs, allowH2: false });
  return (options, callback) => {
    const servername = options.servername ?? (isIP(options.hostname) === 0 ? options.hostname : undefined);
    connect({ ...options, hostname: address, ...(servername ? { servername } : {}) }, callback);
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
      connect: pinnedConnector(address, this.options.connectTimeoutMs),
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
