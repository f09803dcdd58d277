// Worker thread of the stage breakdown (delivery-stages.mjs): a core NATS subscription to the issue
// event subjects that notes when each event id (Nats-Msg-Id) was first seen on the bus. It runs on
// an event loop of its own, so an event is timed when it reaches the benchmark, not when the main
// thread (the load generator, the receiver's reports, the samplers) gets to it.
// workerData: { natsUrl }. Posts { ready } once subscribed; answers 'close' by unsubscribing and
// posting { seen: [[event id, epoch ms], ...] }.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

import { preciseNowMs } from './stats.mjs';

const require = createRequire(import.meta.url);
const { connect } = require('@nats-io/transport-node');

const nc = await connect({ servers: workerData.natsUrl.split(','), name: 'bench-stages' });
const seen = new Map();
const subscription = nc.subscribe('issues.>', {
  callback: (error, message) => {
    if (error) return;
    const at = preciseNowMs();
    const id = message.headers?.get('Nats-Msg-Id');
    if (id && !seen.has(id)) seen.set(id, at);
  },
});

parentPort.on('message', async (message) => {
  if (message !== 'close') return;
  // A round trip first: the server answers it after every message it had already sent this way.
  await nc.flush().catch(() => undefined);
  subscription.unsubscribe();
  await nc.drain().catch(() => nc.close());
  parentPort.postMessage({ seen: [...seen] });
  parentPort.close();
});
parentPort.postMessage({ ready: true });
