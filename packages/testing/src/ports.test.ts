import net from 'node:net';
import { describe, expect, it } from '@jest/globals';

import { freePort, freePorts } from './ports';

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
});
