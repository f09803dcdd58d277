import { CachingResolver, parseHostsFile } from './resolver';

describe('parseHostsFile', () => {
  it('maps every name and alias to its addresses, skipping comments and junk', () => {
    const hosts = parseHostsFile('127.0.0.1 localhost\n# comment\n10.0.0.5  Hooks.internal. hooks # trailing\nnot-an-ip name\n::1 localhost\n');
    expect(hosts.get('localhost')).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(hosts.get('hooks.internal')).toEqual([{ address: '10.0.0.5', family: 4 }]);
    expect(hosts.get('hooks')).toEqual([{ address: '10.0.0.5', family: 4 }]);
    expect(hosts.has('name')).toBe(false);
  });
});

describe('CachingResolver', () => {
  it('fails a lookup its servers do not answer, and does not remember that failure', async () => {
    // Nothing answers DNS on the discard port: the query fails (refused or timed out).
    const resolver = new CachingResolver({ servers: ['127.0.0.1:9'], timeoutMs: 300, maxTtlMs: 60_000, negativeTtlMs: 60_000, hostsFile: null });
    await expect(resolver.resolve('nowhere.example')).rejects.toThrow();
    await expect(resolver.resolve('nowhere.example')).rejects.toThrow();
    expect(resolver.queries).toBe(2);
    expect(resolver.size).toBe(0);
    resolver.cancel();
  });

  it('shares one query between concurrent lookups of a name', async () => {
    const resolver = new CachingResolver({ servers: ['127.0.0.1:9'], timeoutMs: 300, maxTtlMs: 60_000, negativeTtlMs: 60_000, hostsFile: null });
    await Promise.allSettled([resolver.resolve('same.example'), resolver.resolve('SAME.example.'), resolver.resolve('same.example')]);
    expect(resolver.queries).toBe(1);
    resolver.cancel();
  });
});
