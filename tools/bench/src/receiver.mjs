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
 * The thread every receiver of this process serves on (receiver-thread.mjs), started with the first
 * receiver and ended with the last; `byId` routes its messages to their receiver.
 */
const receiverThread = { worker: undefined, byId: new Map(), nextId: 1 };

function receiverWorker() {
  if (receiverThread.worker) return receiverThread.worker;
  const worker = new Worker(new URL('./receiver-thread.mjs', import.meta.url), { name: 'receiver' });
  worker.on('message', (message) => receiverThread.byId.get(message.id ?? message.opened ?? message.closed)?.(message));
  worker.on('error', (error) => {
    for (const handle of receiverThread.byId.values()) handle({ error });
  });
  receiverThread.worker = worker;
  return worker;
}

/**
 * The receiver: answers 204 at once and notes when each delivery (X-Webhook-Delivery) first
 * arrived, with its event's created_at. It serves on a thread shared by every receiver of the
 * benchmark (receiver-thread.mjs), so an arrival is timed when it arrives, whatever the benchmark's
 * main thread is doing; what it noted reaches `firstReceipt` and `onDelivery` on the main thread.
 * `onDelivery(body, receivedAt, deliveryId, path)` sees the parsed body of every first arrival and
 * the path it was sent to. `reports: false` makes a receiver that only counts its requests
 * (`firstReceipt` stays empty): the bare loop's, whose thousands of arrivals a second would
 * otherwise cost the main thread a message each and take a core from the loop it measures.
 */
export function startReceiver(certificate, { onDelivery, reports = true } = {}) {
  const id = receiverThread.nextId++;
  const firstReceipt = new Map(); // delivery id -> { receivedAt, createdAt }
  const requests = new Int32Array(new SharedArrayBuffer(4));
  const worker = receiverWorker();
  let opened;
  let closed;
  let closing;
  receiverThread.byId.set(id, (message) => {
    if (message.error) return (opened ?? closed)?.reject(message.error);
    if (message.opened !== undefined) return opened.resolve(message.port);
    if (message.closed !== undefined) return closed.resolve();
    const { deliveryId, receivedAt, path: hookPath, text } = message;
    const body = JSON.parse(text);
    firstReceipt.set(deliveryId, { receivedAt, createdAt: preciseTimeMs(body.created_at) });
    onDelivery?.(body, receivedAt, deliveryId, hookPath);
  });
  const port = new Promise((resolve, reject) => (opened = { resolve, reject }));
  worker.postMessage({ open: id, cert: certificate.cert, key: certificate.key, requests, reports });
  return port.then((portNumber) => {
    opened = undefined;
    return {
      url: (hookPath) => `https://localhost:${portNumber}${hookPath}`,
      /** The same receiver by address, for when the webhook must not depend on name resolution. */
      ipUrl: (hookPath) => `https://127.0.0.1:${portNumber}${hookPath}`,
      firstReceipt,
      get requests() {
        return Atomics.load(requests, 0);
      },
      close: () =>
        (closing ??= (async () => {
          const done = new Promise((resolve, reject) => (closed = { resolve, reject }));
          worker.postMessage({ close: id });
          await done;
          receiverThread.byId.delete(id);
          if (receiverThread.byId.size === 0 && receiverThread.worker === worker) {
            receiverThread.worker = undefined;
            await worker.terminate();
          }
        })()),
    };
  });
}
