import { promises as dns } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

/** The shape of address-policy's HostLookup (`dns.lookup` with `all: true`). */
export type DnsLookup = (host: string) => Promise<readonly { address: string; family: number }[]>;

export interface DnsServersOptions {
  /** `WEBHOOK_DNS_SERVERS`: `ip` or `ip:port` entries (`[v6]:port` for IPv6 with a port). */
  servers: readonly string[];
  timeoutMs?: number;
}

/**
 * A lookup for the address policy that asks specific DNS servers instead of the system
 * resolver. Operators whose receivers are named in a dedicated DNS (split horizon, a filtering
 * resolver) use it through WEBHOOK_DNS_SERVERS; the policy applied to the answers is the same.
 * Undefined when no servers are given: the policy then uses getaddrinfo, /etc/hosts included.
 */
export function dnsServersLookup(options: DnsServersOptions): DnsLookup | undefined {
  if (options.servers.length === 0) return undefined;
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 2_000, tries: 2 });
  resolver.setServers([...options.servers]);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const answers = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (answers.length === 0) throw v4.status === 'rejected' ? v4.reason : new Error(`no addresses for ${host}`);
    return answers;
  };
}

export interface CachingResolverOptions {
  /** DNS servers (`ip` or `ip:port`); empty: the servers of the system configuration (resolv.conf). */
  servers: readonly string[];
  /** A lookup (A and AAAA together) that gets no answer within this time fails. */
  timeoutMs: number;
  /** Answers are kept for their records' TTL, at most this long. */
  maxTtlMs: number;
  /** A name that does not exist (or has no address) is remembered this long. */
  negativeTtlMs: number;
  /** Names remembered at most; the least recently used are forgotten first. */
  maxEntries?: number;
  /** A hosts file consulted before DNS, as getaddrinfo does; null to ignore hosts files. */
  hostsFile?: string | null;
  /** The clock, for tests. */
  now?: () => number;
}

interface CacheEntry {
  expiresAt: number;
  addresses?: readonly { address: string; family: number }[];
  error?: Error;
}

/** Errors that say the name has no address, as opposed to a resolver that could not answer. */
const NEGATIVE_CODES = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NOTFOUND', 'NODATA']);

/** `name → addresses` from a hosts file (`address name alias...`), lower-cased; empty when unreadable. */
export function parseHostsFile(text: string): Map<string, { address: string; family: number }[]> {
  const hosts = new Map<string, { address: string; family: number }[]>();
  for (const rawLine of text.split('\n')) {
    const [address, ...names] = (rawLine.split('#')[0] ?? '').trim().split(/\s+/);
    const family = address ? isIP(address) : 0;
    if (!address || family === 0) continue;
    for (const name of names) {
      const key = name.toLowerCase().replace(/\.$/, '');
      const list = hosts.get(key) ?? [];
      if (!list.some((entry) => entry.address === address)) list.push({ address, family });
      hosts.set(key, list);
    }
  }
  return hosts;
}

function readHosts(path: string | null): Map<string, { address: string; family: number }[]> {
  if (!path) return new Map();
  try {
    return parseHostsFile(readFileSync(path, 'utf8'));
  } catch {
    return new Map();
  }
}

/**
 * Resolves receiver host names without libuv's thread pool. `dns.lookup` runs getaddrinfo on the
 * pool's four threads, which every team's deliveries (and crypto, and file access) share, so a few
 * slow-resolving hosts could stall everybody. This asks DNS asynchronously (c-ares: A and AAAA in
 * parallel), bounds each lookup by a timeout, and keeps answers for their records' TTL (capped),
 * and names that do not exist briefly, so a flood of deliveries to one host costs one query.
 * Concurrent lookups of a name share one query. The hosts file (read once) is consulted first.
 *
 * It only answers "which addresses": the address policy still checks every address it returns, and
 * the sender still connects to the checked one.
 */
export class CachingResolver {
  private readonly resolver: InstanceType<typeof dns.Resolver>;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly pending = new Map<string, Promise<readonly { address: string; family: number }[]>>();
  private readonly hosts: Map<string, { address: string; family: number }[]>;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Queries sent to DNS servers (cache misses), for tests and metrics. */
  queries = 0;

  constructor(private readonly options: CachingResolverOptions) {
    // c-ares retries by itself within the timeout; the overall timeout below bounds the lookup.
    this.resolver = new dns.Resolver({ timeout: Math.max(100, Math.floor(options.timeoutMs / 2)), tries: 2 });
    if (options.servers.length > 0) this.resolver.setServers([...options.servers]);
    this.hosts = readHosts(options.hostsFile === undefined ? '/etc/hosts' : options.hostsFile);
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** A HostLookup for the address policy. */
  readonly lookup: DnsLookup = (host) => this.resolve(host);

  get size(): number {
    return this.cache.size;
  }

  async resolve(host: string): Promise<readonly { address: string; family: number }[]> {
    const name = host.toLowerCase().replace(/\.$/, '');
    const fromHosts = this.hosts.get(name);
    if (fromHosts) return fromHosts;
    const cached = this.cache.get(name);
    if (cached) {
      if (cached.expiresAt > this.now()) {
        // Re-inserting keeps the map in least-recently-used order.
        this.cache.delete(name);
        this.cache.set(name, cached);
        if (cached.error) throw cached.error;
        return cached.addresses!;
      }
      this.cache.delete(name);
    }
    let query = this.pending.get(name);
    if (!query) {
      query = this.query(name).finally(() => this.pending.delete(name));
      this.pending.set(name, query);
    }
    return query;
  }

  /** Stops queries in flight (they fail). */
  cancel(): void {
    this.resolver.cancel();
  }

  private async query(name: string): Promise<readonly { address: string; family: number }[]> {
    this.queries += 1;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no DNS answer within ${this.options.timeoutMs} ms`), { code: 'ETIMEOUT' })), this.options.timeoutMs);
    });
    try {
      const [v4, v6] = await Promise.race([Promise.allSettled([this.resolver.resolve4(name, { ttl: true }), this.resolver.resolve6(name, { ttl: true })]), timeout]);
      const records = [
        ...(v4.status === 'fulfilled' ? v4.value.map((record) => ({ ...record, family: 4 })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((record) => ({ ...record, family: 6 })) : []),
      ];
      if (records.length === 0) {
        const error: Error & { code?: string } = v4.status === 'rejected' ? (v4.reason as Error) : new Error(`no addresses for ${name}`);
        const code = error.code ?? (v6.status === 'rejected' ? (v6.reason as { code?: string }).code : undefined) ?? 'ENODATA';
        // A name that does not exist is remembered briefly; a server that failed is asked again next time.
        const negative = NEGATIVE_CODES.has(code) && (v6.status === 'fulfilled' || NEGATIVE_CODES.has((v6.reason as { code?: string }).code ?? ''));
        if (negative) this.remember(name, { expiresAt: this.now() + this.options.negativeTtlMs, error });
        throw error;
      }
      const ttlMs = Math.min(this.options.maxTtlMs, Math.min(...records.map((record) => record.ttl)) * 1000);
      const addresses = records.map(({ address, family }) => ({ address, family }));
      if (ttlMs > 0) this.remember(name, { expiresAt: this.now() + ttlMs, addresses });
      return addresses;
    } finally {
      clearTimeout(timer);
    }
  }

  private remember(name: string, entry: CacheEntry): void {
    this.cache.set(name, entry);
    while (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value as string;
      this.cache.delete(oldest);
    }
  }
}
