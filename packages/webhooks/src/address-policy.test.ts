import { AddressPolicyError, AllowedCidrs, type HostLookup, isPermittedAddress, isPublicAddress, nonPublicRange, resolvePublicAddresses } from './address-policy';

describe('nonPublicRange', () => {
  it.each([
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.0.0.192', 'IETF protocol assignments'],
    ['192.0.2.10', 'documentation'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['192.168.1.1', 'private'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'unique local'],
    ['fe80::1', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['100::1', 'discard-only'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['::ffff:10.1.2.3', 'IPv4-mapped private'],
    ['64:ff9b::7f00:1', 'NAT64 loopback'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
    ['2002:7f00:1::', '6to4 loopback'],
    ['2002:c0a8:101::1', '6to4 private'],
    // IPv4-compatible (deprecated), not IPv4-mapped: outside global unicast.
    ['::127.0.0.1', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['::8.8.8.8', 'reserved'],
    ['2001::1', 'IETF protocol assignments'],
    ['2001:2::1', 'IETF protocol assignments'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['4000::1', 'reserved'],
  ])('%s is %s', (address, range) => {
    expect(nonPublicRange(address)).toBe(range);
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '9.255.255.255',
    '11.0.0.1',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.1',
    '169.253.255.255',
    '172.15.255.255',
    '172.32.0.0',
    '192.0.1.1',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (address) => {
    expect(nonPublicRange(address)).toBeUndefined();
    expect(isPublicAddress(address)).toBe(true);
  });

  it('refuses strings that are not IP addresses', () => {
    for (const notAnAddress of ['example.com', '127.1', '0x7f000001', '', '1.2.3.4/8', 'fe80::1%eth0']) {
      expect(() => nonPublicRange(notAnAddress)).toThrow(TypeError);
    }
  });
});

describe('AllowedCidrs', () => {
  it('matches addresses inside the ranges, IPv4-mapped forms included', () => {
    const allowed = AllowedCidrs.parse(['127.0.0.0/8', ' fd00::/8 ', '10.1.2.3/32']);
    expect(allowed.includes('127.0.0.1')).toBe(true);
    expect(allowed.includes('::ffff:127.0.0.1')).toBe(true);
    expect(allowed.includes('fd12::1')).toBe(true);
    expect(allowed.includes('10.1.2.3')).toBe(true);
    expect(allowed.includes('10.1.2.4')).toBe(false);
    expect(allowed.includes('::1')).toBe(false);
    expect(allowed.includes('not an address')).toBe(false);
  });

  it.each(['127.0.0.1', '127.0.0.0/33', '::/129', 'localhost/8', '10.0.0.0/x', '', '10.0.0.0/8/8'])('refuses %j as a CIDR', (cidr) => {
    expect(() => AllowedCidrs.parse([cidr])).toThrow(/not a CIDR range/);
  });

  it('lets an allowed range through isPermittedAddress and nothing else', () => {
    expect(isPermittedAddress('127.0.0.1')).toBe(false);
    expect(isPermittedAddress('127.0.0.1', ['127.0.0.0/8'])).toBe(true);
    expect(isPermittedAddress('192.168.0.1', ['127.0.0.0/8'])).toBe(false);
    expect(isPermittedAddress('8.8.8.8', [])).toBe(true);
  });
});

const answers =
  (table: Record<string, string[]>): HostLookup =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const refusal = async (promise: Promise<unknown>): Promise<AddressPolicyError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AddressPolicyError) return error;
    throw error;
  }
  throw new Error('expected the host to be refused');
};

describe('resolvePublicAddresses', () => {
  const lookup = answers({
    'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    'internal.example.com': ['10.0.0.5'],
    'mixed.example.com': ['93.184.215.14', '127.0.0.1'],
    'metadata.google.internal': ['169.254.169.254'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'garbage.example.com': ['not-an-ip'],
    'empty.example.com': [],
  });

  it('returns every checked address of a public name', async () => {
    await expect(resolvePublicAddresses('hooks.example.com', [], { lookup })).resolves.toEqual([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
  });

  it('normalises case and a trailing root dot before resolving', async () => {
    await expect(resolvePublicAddresses('HOOKS.Example.com.', [], { lookup })).resolves.toHaveLength(2);
  });

  it.each([
    ['internal.example.com', '10.0.0.5'],
    ['metadata.google.internal', '169.254.169.254'],
    ['mapped.example.com', '::ffff:7f00:1'],
    // One bad address is enough: a client might be handed that one.
    ['mixed.example.com', '127.0.0.1'],
  ])('refuses %s, which resolves to %s', async (host, address) => {
    const error = await refusal(resolvePublicAddresses(host, [], { lookup }));
    expect(error.reason).toBe('non_public');
    expect(error.address).toBe(address);
  });

  it.each(['127.0.0.1', '[::1]', '::1', '[::ffff:127.0.0.1]', '169.254.169.254', '10.0.0.1', '[fd00::1]', '[64:ff9b::7f00:1]'])(
    'refuses the literal %s without asking the resolver',
    async (host) => {
      const error = await refusal(resolvePublicAddresses(host, [], { lookup: () => Promise.reject(new Error('resolver used')) }));
      expect(error.reason).toBe('non_public');
    },
  );

  it('accepts a public literal without asking the resolver', async () => {
    const noResolver: HostLookup = () => Promise.reject(new Error('resolver used'));
    await expect(resolvePublicAddresses('8.8.8.8', [], { lookup: noResolver })).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
    await expect(resolvePublicAddresses('[2001:4860:4860::8888]', [], { lookup: noResolver })).resolves.toEqual([{ address: '2001:4860:4860::8888', family: 6 }]);
  });

  it.each(['localhost', 'LOCALHOST.', 'api.localhost'])('treats %s as loopback whatever the resolver says', async (host) => {
    const liar = answers({ localhost: ['8.8.8.8'], 'api.localhost': ['8.8.8.8'] });
    const error = await refusal(resolvePublicAddresses(host, [], { lookup: liar }));
    expect(error.reason).toBe('non_public');
    expect(error.address).toBe('127.0.0.1');
  });

  it.each(['nowhere.example.com', 'garbage.example.com', 'empty.example.com'])('refuses %s, which does not resolve', async (host) => {
    const error = await refusal(resolvePublicAddresses(host, [], { lookup }));
    expect(error.reason).toBe('unresolvable');
  });

  it('refuses a name whose resolver does not answer in time', async () => {
    const silent: HostLookup = () => new Promise(() => {});
    const error = await refusal(resolvePublicAddresses('slow.example.com', [], { lookup: silent, timeoutMs: 10 }));
    expect(error.reason).toBe('unresolvable');
  });

  it('lets allowed ranges through, for names and literals alike', async () => {
    const allowed = AllowedCidrs.parse(['10.0.0.0/8', '127.0.0.0/8']);
    await expect(resolvePublicAddresses('internal.example.com', allowed, { lookup })).resolves.toEqual([{ address: '10.0.0.5', family: 4 }]);
    await expect(resolvePublicAddresses('127.0.0.1', allowed, { lookup })).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(resolvePublicAddresses('localhost', allowed, { lookup })).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect((await refusal(resolvePublicAddresses('metadata.google.internal', allowed, { lookup }))).reason).toBe('non_public');
  });

  it('describes a refusal with host, address and range for the logs', async () => {
    const error = await refusal(resolvePublicAddresses('internal.example.com', [], { lookup }));
    expect(error).toMatchObject({ reason: 'non_public', host: 'internal.example.com', address: '10.0.0.5', range: 'private' });
  });
});
