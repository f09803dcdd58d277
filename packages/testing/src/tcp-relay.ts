import net from 'node:net';

/**
 * A TCP relay in front of a server (PostgreSQL, NATS, a service) that a test can cut and restore,
 * to show what a client does while its dependency is unreachable without stopping the server that
 * other tests share. Point the client at `host:port` instead of the server's own address.
 */
export interface TcpRelay {
  host: string;
  port: number;
  /** Closes every relayed connection and refuses new ones (each is closed as soon as it opens). */
  cut(): void;
  /** Relays new connections again. */
  restore(): void;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const open = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    }
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const closeAll = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    host: '127.0.0.1',
    port: (server.address() as net.AddressInfo).port,
    cut() {
      cut = true;
      closeAll();
    },
    restore() {
      cut = false;
    },
    close() {
      closeAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** `url` with its host and port replaced by the relay's (e.g. a postgres:// URL). */
export function throughRelay(url: string, relay: Pick<TcpRelay, 'host' | 'port'>): string {
  const relayed = new URL(url);
  relayed.hostname = relay.host;
  relayed.port = String(relay.port);
  return relayed.toString();
}
