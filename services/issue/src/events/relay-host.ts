import { join } from 'node:path';
import { ServiceThread, type Logger } from '@worklane/observability';
import type { CommittedEventPublisher, OutboxEvent } from '../data/issues';
import { handOverWhileIdle } from './handover-gate';
import { RELAY_MESSAGES } from './relay-messages';

/**
 * Starts the outbox relay on a thread of its own (relay-thread/main.ts) and resolves once it publishes.
 * Its event loop serves only the relay: a burst of API work (large pages, request bodies, their
 * garbage collection) cannot hold up the publishing of any team's events. `publisher` is what the
 * API's creates hand their committed events to (IssueStore), as messages to that thread, while
 * this (the API's) thread is not kept busy (`handoverMaxLoopUtilization`, handover-gate.ts);
 * otherwise their events go to the relay's claim.
 */
export async function startRelayThread(options: {
  logger: Logger;
  leaseSeconds: number;
  /** OUTBOX_HANDOVER_MAX_LOOP_UTILIZATION. */
  handoverMaxLoopUtilization: number;
}): Promise<{ thread: ServiceThread; publisher: CommittedEventPublisher }> {
  const thread = new ServiceThread({ file: join(__dirname, '..', 'relay-thread', 'main.js'), name: 'outbox relay', logger: options.logger });
  // Until the relay says otherwise, creates leave their events to its claims.
  let ready = false;
  thread.on(RELAY_MESSAGES.ready, (message) => (ready = message.ready === true));
  await thread.start();
  const publisher = handOverWhileIdle(
    {
      leaseSeconds: options.leaseSeconds,
      ready: () => ready,
      publish: (event: OutboxEvent) => thread.post({ kind: RELAY_MESSAGES.committed, event }),
    },
    options.handoverMaxLoopUtilization,
  );
  return { thread, publisher };
}
