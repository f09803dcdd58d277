// The stage breakdown's bus watch (delivery-stages.mjs), against the NATS server `npm test` starts.
import { createRequire } from 'node:module';

import { watchBus } from '../src/delivery-stages.mjs';

const require = createRequire(import.meta.url);
const { connect, headers } = require('@nats-io/transport-node');

const natsUrl = process.env.NATS_URL;
if (!natsUrl) throw new Error('NATS_URL is not set: run the tests with `npm test`, which starts NATS');

describe('the bus watch', () => {
  it('notes when each event id was first seen on the issue subjects, and only those', async () => {
    const bus = await watchBus(natsUrl);
    const publisher = await connect({ servers: natsUrl.split(',') });
    const before = Date.now();
    try {
      const publish = (subject, id) => {
        const h = headers();
        h.set('Nats-Msg-Id', id);
        publisher.publish(subject, '{}', { headers: h });
      };
      publish('issues.created', 'event-1');
      publish('issues.updated', 'event-2');
      publish('issues.updated', 'event-1'); // the same event again: its first sighting stands
      publish('webhooks.changed', 'not-an-issue-event');
      // Once the server has them, the watch's close reads them before it unsubscribes.
      await publisher.flush();
    } finally {
      await publisher.close();
    }
    expect(bus.seen.size).toBe(0); // filled when closed
    await bus.close();

    expect([...bus.seen.keys()].sort()).toEqual(['event-1', 'event-2']);
    // event-1's first sighting stands: it came before event-2, not with its repeat after it.
    expect(bus.seen.get('event-1')).toBeLessThanOrEqual(bus.seen.get('event-2'));
    // Epoch milliseconds (from the watch thread's clock, which may differ from Date.now() by a little).
    for (const at of bus.seen.values()) {
      expect(at).toBeGreaterThan(before - 1_000);
      expect(at).toBeLessThan(Date.now() + 1_000);
    }
    await bus.close(); // closing again changes nothing
    expect(bus.seen.size).toBe(2);
  });
});
