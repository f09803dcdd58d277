// Worker thread of the benchmarks' receivers (receiver.mjs): HTTPS servers on 127.0.0.1, as many as
// the benchmark opens (one per endpoint it needs: the curve's 1,000 tenants each have one), that
// answer 204 at once and note when each delivery (X-Webhook-Delivery) first arrived. They run on an
// event loop of their own, so the time noted is when the request arrived, not when the benchmark's
// load generator or samplers (on the main thread) let it be seen.
// Messages in: { open: id, cert, key, requests, reports } (requests: an Int32Array on shared
// memory, counted here) and { close: id }. Messages out: { opened: id, port }; then, when
// `reports`, { id, deliveryId, receivedAt, path, text } for each first arrival; { closed: id }.
// A server without `reports` (the bare loop's, which only counts) still reads each body as JSON,
// so that it costs what a reporting server costs, less the messages.
import { createServer } from 'node:https';
import { parentPort } from 'node:worker_threads';

import { preciseNowMs } from './stats.mjs';

const servers = new Map(); // id -> https.Server

function open({ open: id, cert, key, requests, reports }) {
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
      if (reports) parentPort.postMessage({ id, deliveryId, receivedAt, path: req.url, text });
      else JSON.parse(text);
    });
  });
  servers.set(id, server);
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ opened: id, port: server.address().port }));
}

function close(id) {
  const server = servers.get(id);
  servers.delete(id);
  if (!server) return parentPort.postMessage({ closed: id });
  server.closeAllConnections();
  server.close(() => parentPort.postMessage({ closed: id }));
}

parentPort.on('message', (message) => (message.open !== undefined ? open(message) : close(message.close)));
