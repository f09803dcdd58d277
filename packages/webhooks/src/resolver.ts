import { promises as dns } from 'node:dns';

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
