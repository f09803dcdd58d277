import fs from 'node:fs';
import net from 'node:net';

/**
 * Where the tests' ports come from: below the kernel's ephemeral range, so that no outgoing
 * connection of any process (to PostgreSQL, NATS, another service) can take a port between the
 * moment it is chosen and the moment its service listens on it. Port 0 would hand out exactly
 * those ephemeral ports.
 */
const RANGE_LOW = 20_000;
const RANGE_HIGH = 30_000;

/** The first port of the kernel's ephemeral range (Linux), or the usual 32768 elsewhere. */
function ephemeralLow(): number {
  try {
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const value = Number(low);
    return Number.isInteger(value) && value > 1024 ? value : 32_768;
  } catch {
    return 32_768;
  }
}

const range = (() => {
  const high = Math.min(RANGE_HIGH, ephemeralLow());
  return high - RANGE_LOW >= 1_000 ? { low: RANGE_LOW, high } : null;
})();

function listen(port: number): Promise<net.Server | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(null));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(server));
  });
}

function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A server on a port of the range that nothing listens on; port 0 when the range is unusable. */
async function listenOnFree(taken: Set<number>): Promise<net.Server> {
  if (range) {
    const size = range.high - range.low;
    for (let tries = 0; tries < 200; tries += 1) {
      const port = range.low + Math.floor(Math.random() * size);
      if (taken.has(port)) continue;
      const server = await listen(port);
      if (server) return server;
    }
  }
  const server = await listen(0);
  if (!server) throw new Error('freePorts: could not listen on 127.0.0.1');
  return server;
}

/** A TCP port that was free on 127.0.0.1 a moment ago (bound, then released). */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port as number;
}

/**
 * `count` distinct free ports, chosen at random below the ephemeral range: all are held open
 * together, so none is handed out twice. Another process may still take one before it is used:
 * startService and startSystem start again on new ports when a service finds its port in use.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  const taken = new Set<number>();
  try {
    for (let i = 0; i < count; i += 1) {
      const server = await listenOnFree(taken);
      servers.push(server);
      taken.add((server.address() as net.AddressInfo).port);
    }
    return [...taken];
  } finally {
    await Promise.all(servers.map(close));
  }
}

/** True when a service's output says that it could not listen because its address was in use. */
export function reportsAddressInUse(output: string): boolean {
  return /EADDRINUSE|address already in use/i.test(output);
}
