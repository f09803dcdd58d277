// Local HTTPS webhook receivers for the benchmarks: a self-signed certificate the delivery
// service trusts through NODE_EXTRA_CA_CERTS, and a receiver that answers at once.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

import { preciseTimeMs } from './stats.mjs';

/** A self-signed certificate for localhost and 127.0.0.1, made with the openssl CLI; remove `dir` when done. */
export function makeCertificate() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-bench-cert-'));
  const certPath = path.join(dir, 'cert.pem');
  const keyPath = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ],
    { stdio: 'pipe' },
  );
  return { dir, certPath, cert: fs.readFileSync(certPath), key: fs.readFileSync(keyPath) };
}

/**
 * The receiver: answers 204 at once and notes when each delivery (X-Webhook-Delivery) first
 * arrived, with its event's created_at. It serves on a thread of its own (receiver-thread.mjs), so
 * an arrival is timed when it arrives, whatever the benchmark's main thread is doing; what it noted
 * reaches `firstReceipt` and `onDelivery` on the main thread. `onDelivery(body, receivedAt,
 * deliveryId, path)` sees the parsed body of every first arrival and the path it was sent to.
 * `reports: false` makes a receiver that only counts its requests (`firstReceipt` stays empty): the
 * bare loop's, whose thousands of arrivals a second would otherwise cost the main thread a message
 * each and take a core from the loop it measures.
 */
export function startReceiver(certificate, { onDelivery, reports = true } = {}) {
  const firstReceipt = new Map(); // delivery id -> { receivedAt, createdAt }
  const requests = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(new URL('./receiver-thread.mjs', import.meta.url), {
    workerData: { cert: certificate.cert, key: certificate.key, requests, reports },
    name: 'receiver',
  });
  let closed;
  worker.on('message', (message) => {
    if (message.closed) closed?.();
    if (!message.deliveryId) return;
    const { deliveryId, receivedAt, path: hookPath, text } = message;
    const body = JSON.parse(text);
    firstReceipt.set(deliveryId, { receivedAt, createdAt: preciseTimeMs(body.created_at) });
    onDelivery?.(body, receivedAt, deliveryId, hookPath);
  });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', ({ port }) =>
      resolve({
        url: (hookPath) => `https://localhost:${port}${hookPath}`,
        /** The same receiver by address, for when the webhook must not depend on name resolution. */
        ipUrl: (hookPath) => `https://127.0.0.1:${port}${hookPath}`,
        firstReceipt,
        get requests() {
          return Atomics.load(requests, 0);
        },
        close: async () => {
          const done = new Promise((resolveClose) => (closed = resolveClose));
          worker.postMessage('close');
          await done;
          await worker.terminate();
        },
      }),
    );
  });
}
