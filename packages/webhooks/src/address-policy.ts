import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a webhook may be delivered to. A receiver must be reachable on the public
 * internet: anything that could reach the cluster itself, its neighbours or a cloud metadata
 * service is refused unless an operator allows the range (WEBHOOK_ALLOWED_CIDRS). The webhook
 * service checks a URL when it is saved; the delivery service checks again on every attempt and
 * connects only to the address it checked, so a DNS answer that changes in between cannot
 * redirect a delivery.
 */

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = readonly [network: string, prefixLength: number, name: string];

/** IANA special-purpose IPv4 ranges that are not globally reachable (RFC 6890 and successors). */
const NON_PUBLIC_IPV4: readonly Range[] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  // Includes the cloud metadata endpoint 169.254.169.254.
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  // Includes the limited broadcast address 255.255.255.255.
  ['240.0.0.0', 4, 'reserved'],
];

/**
 * IPv6 outside global unicast (2000::/3) is never public; these are the special-purpose blocks
 * inside it. Forms that embed an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by that
 * address instead, before this table is consulted.
 */
const NON_PUBLIC_IPV6_IN_GLOBAL_UNICAST: readonly Range[] = [
  // Teredo, ORCHID, benchmarking and other IETF protocol assignments.
  ['2001::', 23, 'IETF protocol assignments'],
  ['2001:db8::', 32, 'documentation'],
  ['3fff::', 20, 'documentation'],
];

const NAMED_IPV6: readonly Range[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'unique local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['100::', 64, 'discard-only'],
];

const compile = (ranges: readonly Range[]) => ranges.map(([network, prefixLength, name]) => ({ network: ipaddr.parse(network), prefixLength, name }));

const IPV4_TABLE = compile(NON_PUBLIC_IPV4);
const IPV6_GLOBAL_TABLE = compile(NON_PUBLIC_IPV6_IN_GLOBAL_UNICAST);
const IPV6_NAMED_TABLE = compile(NAMED_IPV6);
const GLOBAL_UNICAST = ipaddr.parse('2000::');
const NAT64_WELL_KNOWN = ipaddr.parse('64:ff9b::');
const SIX_TO_FOUR = ipaddr.parse('2002::');

function findRange(address: Address, table: ReturnType<typeof compile>): string | undefined {
  return table.find((range) => range.network.kind() === address.kind() && address.match(range.network, range.prefixLength))?.name;
}

/** The IPv4 address an IPv6 address carries when it is only another way to reach that IPv4 host. */
function embeddedIpv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; form: string } | undefined {
  const bytes = address.toByteArray();
  if (address.isIPv4MappedAddress()) return { ipv4: address.toIPv4Address(), form: 'IPv4-mapped' };
  if (address.match(NAT64_WELL_KNOWN, 96)) return { ipv4: new ipaddr.IPv4(bytes.slice(12, 16)), form: 'NAT64' };
  if (address.match(SIX_TO_FOUR, 16)) return { ipv4: new ipaddr.IPv4(bytes.slice(2, 6)), form: '6to4' };
  return undefined;
}

/**
 * `::127.0.0.1` as `::7f00:1`: ipaddr.js reads a dotted tail after `::` as IPv4-mapped, which
 * would make us check, and a caller connect to, a different address than the one written.
 */
function hexTail(address: string): string {
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (!dotted?.[1] || !dotted[2] || !ipaddr.IPv4.isValidFourPartDecimal(dotted[2])) return address;
  const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(dotted[2]).octets;
  return `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** Parses a literal IPv4 (dotted quad only) or IPv6 address, without brackets or zone. */
function parseLiteral(address: string): Address | undefined {
  // A host name is by far the most common input: Node's check says so cheaply, where ipaddr.js
  // would build and throw an error for it (once per delivery attempt). Every form Node does not
  // take for an address is treated as a name, which must then resolve.
  if (isIP(address) === 0) return undefined;
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) return ipaddr.IPv4.parse(address);
  if (address.includes('%') || !ipaddr.IPv6.isValid(address)) return undefined;
  const ipv6 = hexTail(address);
  return ipaddr.IPv6.isValid(ipv6) ? ipaddr.IPv6.parse(ipv6) : undefined;
}

function nonPublicRangeOf(address: Address): string | undefined {
  if (address.kind() === 'ipv4') return findRange(address, IPV4_TABLE);
  const ipv6 = address as ipaddr.IPv6;
  const embedded = embeddedIpv4(ipv6);
  if (embedded) {
    const range = nonPublicRangeOf(embedded.ipv4);
    return range && `${embedded.form} ${range}`;
  }
  const named = findRange(ipv6, IPV6_NAMED_TABLE);
  if (named) return named;
  if (!ipv6.match(GLOBAL_UNICAST, 3)) return 'reserved';
  return findRange(ipv6, IPV6_GLOBAL_TABLE);
}

/**
 * The name of the non-public range `address` lies in (`loopback`, `private`, `IPv4-mapped
 * link-local`...), or undefined when it is a public address. Throws on a string that is not an
 * IP address.
 */
export function nonPublicRange(address: string): string | undefined {
  const parsed = parseLiteral(address);
  if (!parsed) throw new TypeError(`not an IP address: ${address}`);
  return nonPublicRangeOf(parsed);
}

/** Whether `address` (an IPv4 or IPv6 literal) is reachable on the public internet. */
export function isPublicAddress(address: string): boolean {
  return nonPublicRange(address) === undefined;
}

/** Ranges an operator allows despite being non-public, parsed once. */
export class AllowedCidrs {
  private constructor(private readonly ranges: readonly (readonly [Address, number])[]) {}

  static readonly none = new AllowedCidrs([]);

  /** Parses `10.0.0.0/8`-style entries; throws naming the first entry that is not a CIDR. */
  static parse(cidrs: readonly string[]): AllowedCidrs {
    return new AllowedCidrs(
      cidrs.map((cidr) => {
        const parts = cidr.trim().split('/');
        const [network = '', prefix = ''] = parts.length === 2 ? parts : [];
        const address = parseLiteral(network);
        const prefixLength = /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
        const maxPrefix = address?.kind() === 'ipv4' ? 32 : 128;
        if (!address || !(prefixLength >= 0 && prefixLength <= maxPrefix)) {
          throw new TypeError(`not a CIDR range: ${JSON.stringify(cidr)} (expected e.g. 10.0.0.0/8 or fd00::/8)`);
        }
        return [address, prefixLength] as const;
      }),
    );
  }

  get isEmpty(): boolean {
    return this.ranges.length === 0;
  }

  /** An IPv4-mapped IPv6 address matches the IPv4 ranges too, being the same host. */
  includes(address: string): boolean {
    const parsed = parseLiteral(address);
    if (!parsed) return false;
    const candidates: Address[] = [parsed];
    if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) candidates.push((parsed as ipaddr.IPv6).toIPv4Address());
    return candidates.some((candidate) => this.ranges.some(([network, prefixLength]) => network.kind() === candidate.kind() && candidate.match(network, prefixLength)));
  }
}

const toAllowed = (allowed: AllowedCidrs | readonly string[]) => (allowed instanceof AllowedCidrs ? allowed : AllowedCidrs.parse(allowed));

/** Whether a delivery may connect to `address`: it is public, or inside an allowed range. */
export function isPermittedAddress(address: string, allowed: AllowedCidrs | readonly string[] = AllowedCidrs.none): boolean {
  return isPublicAddress(address) || toAllowed(allowed).includes(address);
}

/** An address that passed the policy, ready to connect to. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export type AddressRefusal = 'non_public' | 'unresolvable';

/**
 * A host the policy refuses. `message` names the host and address for logs; it is not meant for
 * API clients, who should not learn how internal names resolve.
 */
export class AddressPolicyError extends Error {
  constructor(
    readonly reason: AddressRefusal,
    readonly host: string,
    message: string,
    readonly address?: string,
    readonly range?: string,
  ) {
    super(message);
    this.name = 'AddressPolicyError';
  }
}

/** `dns.lookup` with `all: true`, injectable so that tests need no resolver. */
export type HostLookup = (host: string) => Promise<readonly { address: string; family: number }[]>;

export interface ResolveOptions {
  lookup?: HostLookup;
  /** A resolver that does not answer in time counts as unresolvable. */
  timeoutMs?: number;
}

const systemLookup: HostLookup = (host) => dnsLookup(host, { all: true, order: 'verbatim' });

/** RFC 6761: these names are loopback whatever a resolver says about them. */
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** `[::1]` (as in a URL) becomes `::1`; a trailing root dot is dropped; names are lower-cased. */
function normaliseHost(host: string): string {
  const unbracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return unbracketed.replace(/\.$/, '').toLowerCase();
}

async function lookupWithin(host: string, lookup: HostLookup, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([lookup(host), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves `host` (a name, an IP literal, or a bracketed IPv6 literal from a URL) and checks every
 * address it resolves to. Refuses (AddressPolicyError) when it does not resolve, or when ANY of
 * its addresses is non-public and not allowed, since a client could otherwise be handed the bad
 * one. Resolves to the checked addresses, which are what a caller must connect to.
 */
export async function resolvePublicAddresses(
  host: string,
  allowedCidrs: AllowedCidrs | readonly string[] = AllowedCidrs.none,
  options: ResolveOptions = {},
): Promise<CheckedAddress[]> {
  const allowed = toAllowed(allowedCidrs);
  const name = normaliseHost(host);
  let addresses: CheckedAddress[];
  const literal = parseLiteral(name);
  if (literal) {
    addresses = [{ address: literal.toString(), family: literal.kind() === 'ipv4' ? 4 : 6 }];
  } else if (isLocalhostName(name)) {
    addresses = [{ address: '127.0.0.1', family: 4 }];
  } else {
    let answers: readonly { address: string; family: number }[];
    try {
      answers = await lookupWithin(name, options.lookup ?? systemLookup, options.timeoutMs ?? 5_000);
    } catch (error) {
      throw new AddressPolicyError('unresolvable', name, `${name} does not resolve: ${(error as Error).message}`);
    }
    addresses = answers.flatMap(({ address }) => {
      const parsed = parseLiteral(address);
      return parsed ? [{ address: parsed.toString(), family: parsed.kind() === 'ipv4' ? (4 as const) : (6 as const) }] : [];
    });
    if (addresses.length === 0 || addresses.length !== answers.length) {
      throw new AddressPolicyError('unresolvable', name, `${name} does not resolve to an IP address`);
    }
  }
  for (const { address } of addresses) {
    const range = nonPublicRange(address);
    if (range !== undefined && !allowed.includes(address)) {
      throw new AddressPolicyError('non_public', name, `${name} resolves to ${address} (${range}), which is not a public address`, address, range);
    }
  }
  return addresses;
}
