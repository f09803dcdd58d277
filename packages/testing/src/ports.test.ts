import fs from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from '@jest/globals';

import { freePort, freePorts, reportsAddressInUse } from './ports';

describe('freePorts', () => {
  it('hands out distinct ports that can be bound', async () => {
    const ports = await freePorts(12);
    expect(new Set(ports).size).toBe(12);
    const port = await freePort();
    await new Promise<void>((resolve, reject) => {
      const server = net.createServer().once('error', reject);
      server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
    });
  });

  it("chooses them below the kernel's ephemeral range, where no outgoing connection takes them", async () => {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    for (const port of await freePorts(50)) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(Math.min(30_000, low));
    }
  });
});

describe('reportsAddressInUse', () => {
  it('recognises a listen that failed because the address was in use', () => {
    expect(reportsAddressInUse('{"level":"fatal","err":{"message":"listen EADDRINUSE: address already in use 127.0.0.1:33035"}}')).toBe(true);
    expect(reportsAddressInUse('No address added out of total 1 resolved: bind EADDRINUSE')).toBe(true);
    expect(reportsAddressInUse('boom: bad configuration')).toBe(false);
  });
});
