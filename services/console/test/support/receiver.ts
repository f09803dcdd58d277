import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReceivedDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface HttpsReceiver {
  /** https://127.0.0.1:<port>/hooks/worklane */
  url: string;
  /** PEM file of the receiver's self-signed certificate, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  received: ReceivedDelivery[];
  /** From now on, answer every POST with this status (an endpoint that is down), or with 200 again (null). */
  failWith(status: number | null): void;
  close(): Promise<void>;
}

/**
 * A webhook endpoint on 127.0.0.1 over HTTPS with a self-signed certificate made by openssl,
 * answering every POST with 200 and a short body, so the delivery log has an excerpt to show; it
 * can be told to fail instead. Only the requests it answered with 200 are in `received`.
 */
export async function startHttpsReceiver(): Promise<HttpsReceiver> {
  const dir = mkdtempSync(join(tmpdir(), 'worklane-receiver-'));
  const keyFile = join(dir, 'key.pem');
  const caFile = join(dir, 'cert.pem');
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
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      caFile,
    ],
    { stdio: 'ignore' },
  );
  const received: ReceivedDelivery[] = [];
  let failure: number | null = null;
  const server: Server = createServer({ key: readFileSync(keyFile), cert: readFileSync(caFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (failure !== null) {
        res.writeHead(failure, { 'content-type': 'text/plain' }).end('down for maintenance');
        return;
      }
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ received: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/hooks/worklane`,
    caFile,
    received,
    failWith(status) {
      failure = status;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
