// Local HTTPS webhook receivers for the benchmarks: a self-signed certificate the delivery
// service trusts through NODE_EXTRA_CA_CERTS, and a receiver that answers at once.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:https';
import os from 'node:os';
import path from 'node:path';

import { preciseNowMs, preciseTimeMs } from './stats.mjs';

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
 * arrived, with its event's created_at. `onDelivery(body, receivedAt, deliveryId, path)` sees the
 * parsed body of every first arrival and the path it was sent to.
 */
export function startReceiver(certificate, { onDelivery } = {}) {
  const firstReceipt = new Map(); // delivery id -> { receivedAt, createdAt }
  let requests = 0;
  const server = createServer({ cert: certificate.cert, key: certificate.key, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const receivedAt = preciseNowMs();
      requests += 1;
      res.writeHead(204).end();
      const deliveryId = req.headers['x-webhook-delivery'];
      if (firstReceipt.has(deliveryId)) return;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      firstReceipt.set(deliveryId, { receivedAt, createdAt: preciseTimeMs(body.created_at) });
      onDelivery?.(body, receivedAt, deliveryId, req.url);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: (hookPath) => `https://localhost:${server.address().port}${hookPath}`,
        /** The same receiver by address, for when the webhook must not depend on name resolution. */
        ipUrl: (hookPath) => `https://127.0.0.1:${server.address().port}${hookPath}`,
        firstReceipt,
        get requests() {
          return requests;
        },
        close: () => {
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      }),
    );
  });
}
