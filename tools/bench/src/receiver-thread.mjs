// Worker thread of a benchmark receiver (receiver.mjs): an HTTPS server on 127.0.0.1 that answers
// 204 at once and notes when each delivery (X-Webhook-Delivery) first arrived. It runs on an event
// loop of its own, so the time it notes is when the request arrived, not when the benchmark's load
// generator, bus watch or samplers (all on the main thread) let it be seen.
// workerData: { cert, key, requests, reports } (requests: an Int32Array on shared memory, counted
// here). Posts { ready, port }, then, when `reports`, { deliveryId, receivedAt, path, text } for each
// first arrival, and answers 'close' by dropping every connection and posting { closed }. Without
// `reports` (a receiver that only counts, for the bare loop) it still reads each body as JSON, so
// that it costs what a reporting receiver's thread costs, less the messages.
import { createServer } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';

import { preciseNowMs } from './stats.mjs';

const { cert, key, requests, reports } = workerData;
const seen = new Set();
const server = createServer({ cert, key, keepAliveTimeout: 30_000 }, (req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const receivedAt = preciseNowMs();
    Atomics.add(requests, 0, 1);
    res.writeHead(204).end();
    const deliveryId = req.headers['x-webhook-delivery'];
    if (seen.has(deliveryId)) return;
    seen.add(deliveryId);
    const text = Buffer.concat(chunks).toString('utf8');
    if (reports) parentPort.postMessage({ deliveryId, receivedAt, path: req.url, text });
    else JSON.parse(text);
  });
});

parentPort.on('message', (message) => {
  if (message !== 'close') return;
  server.closeAllConnections();
  server.close(() => {
    parentPort.postMessage({ closed: true });
    parentPort.close();
  });
});

server.listen(0, '127.0.0.1', () => parentPort.postMessage({ ready: true, port: server.address().port }));
