import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '@worklane/observability';

export type { NatsConnection };

export interface ConnectNatsOptions {
  /**
   * Whether each request (every JetStream publish is one) records where it was made, for the
   * stack of its error; on by default. A busy publisher turns it off: it costs an Error (a
   * captured stack) or two per request, and a failed request still says what failed.
   */
  asyncTraces?: boolean;
}

/** NATS_URL read: the servers without credentials, and the credentials they carried. */
export interface NatsServers {
  servers: string[];
  /** From `nats://user:password@host:port`. */
  user?: string;
  pass?: string;
  /** From `nats://token@host:port` (a user name without a password). */
  token?: string;
}

/**
 * Reads NATS_URL: servers separated by commas, each `host:port` or a URL (`nats://`, `tls://`).
 * A URL may carry credentials, user and password or a token; nats.js takes credentials from its
 * options only and would connect without them, so they are taken out of the URLs here. Every
 * server that carries credentials must carry the same. Errors never repeat the value (it may hold
 * a password).
 */
export function parseNatsServers(value: string): NatsServers {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  if (entries.length === 0) throw new Error('NATS_URL names no server');
  const servers: string[] = [];
  let credentials: { user?: string; pass?: string; token?: string } | undefined;
  entries.forEach((entry, index) => {
    let url: URL;
    try {
      url = new URL(entry.includes('://') ? entry : `nats://${entry}`);
    } catch {
      throw new Error(`NATS_URL: server ${index + 1} of ${entries.length} is not host:port or a URL`);
    }
    if (!url.hostname) throw new Error(`NATS_URL: server ${index + 1} of ${entries.length} has no host`);
    if (url.username || url.password) {
      const decode = (part: string) => {
        try {
          return decodeURIComponent(part);
        } catch {
          throw new Error(`NATS_URL: the credentials of server ${index + 1} of ${entries.length} are not percent-encoded`);
        }
      };
      const found: { user?: string; pass?: string; token?: string } = url.password ? { user: decode(url.username), pass: decode(url.password) } : { token: decode(url.username) };
      if (credentials && (credentials.user !== found.user || credentials.pass !== found.pass || credentials.token !== found.token)) {
        throw new Error('NATS_URL: servers carry different credentials; give every server the same');
      }
      credentials = found;
    }
    servers.push(`${url.protocol}//${url.host}`);
  });
  return { servers, ...credentials };
}

/**
 * Connects to NATS and keeps reconnecting for as long as the process lives: a NATS restart is
 * an outage to ride out, not a reason to exit.
 */
export async function connectNats(natsUrl: string, name: string, logger: Logger, options: ConnectNatsOptions = {}): Promise<NatsConnection> {
  const connection = await connect({
    ...parseNatsServers(natsUrl),
    name,
    noAsyncTraces: options.asyncTraces === false,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
  });
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect' || status.type === 'error') {
        logger.warn({ nats: status.type }, 'NATS connection status changed');
      }
    }
  })();
  return connection;
}
