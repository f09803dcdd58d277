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

/**
 * Connects to NATS and keeps reconnecting for as long as the process lives: a NATS restart is
 * an outage to ride out, not a reason to exit.
 */
export async function connectNats(servers: string, name: string, logger: Logger, options: ConnectNatsOptions = {}): Promise<NatsConnection> {
  const connection = await connect({
    servers: servers.split(',').map((server) => server.trim()),
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
