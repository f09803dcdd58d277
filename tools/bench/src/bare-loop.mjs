// Worker thread of the delivery benchmark: the baseline a delivery pipeline is compared with. A
// bare loop of signed webhook POSTs (the same headers and the same kind of body as a delivery,
// signed with @worklane/webhooks, sent with undici as the delivery service sends them) against the
// same receiver, `concurrency` at a time for `seconds`, on an event loop of its own so that it does
// not share one with the receiver. Posts { done, requests, seconds, failures }.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
const { Pool } = require('undici');
const { deliveryHeaders } = require('@worklane/webhooks');

const { url, ca, concurrency, seconds } = workerData;
const target = new URL(url);
const pool = new Pool(target.origin, { connections: concurrency, connect: { ca } });
const issue = {
  id: 1,
  project_id: 1,
  title: 'Bare loop issue',
  description: null,
  status: 'open',
  priority: 'medium',
  github_issue_number: null,
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
};

let requests = 0;
let failures = 0;
const started = performance.now();
const deadline = started + seconds * 1000;

async function sender(lane) {
  for (let n = 0; performance.now() < deadline; n++) {
    const deliveryId = `bare-${lane}-${n}`;
    const body = Buffer.from(JSON.stringify({ id: deliveryId, event: 'issue.created', created_at: new Date().toISOString(), team_id: 1, issue, changes: null }));
    const headers = deliveryHeaders({
      deliveryId,
      body,
      secret: 'bare-loop-signing-secret',
      timestamp: Math.floor(Date.now() / 1000),
      event: 'issue.created',
      userAgent: 'Worklane-Webhooks/bench',
    });
    try {
      const response = await pool.request({ path: target.pathname, method: 'POST', headers, body });
      await response.body.dump();
      if (response.statusCode >= 200 && response.statusCode < 300) requests += 1;
      else failures += 1;
    } catch {
      failures += 1;
    }
  }
}

await Promise.all(Array.from({ length: concurrency }, (_, lane) => sender(lane)));
const elapsed = (performance.now() - started) / 1000;
await pool.close();
parentPort.postMessage({ done: true, requests, seconds: elapsed, failures });
