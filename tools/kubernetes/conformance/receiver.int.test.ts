// Phase (f) of `npm run test:kubernetes`, next to the API conformance suite: an issue event goes
// from the API through the release in the cluster (gateway, token, issue, NATS, delivery) to an
// HTTPS receiver of a team's, a pod in another namespace of the cluster, signed with the webhook's
// secret and with the body receivers rely on. @worklane/testing is the release in the cluster here
// (in-cluster-testing.cjs); the receiver is read through the address phase (f) describes.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { API_STACK, api, bootstrapTeam, startSystem, type System } from '@worklane/testing';
import { bodySignature } from '@worklane/webhooks';

jest.setTimeout(180_000);

interface ReceiverInfo {
  url: string;
  host: string;
  podIp: string;
  port: number;
  ca: string;
}
interface Received {
  at: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

const receiver = (JSON.parse(readFileSync(process.env.WORKLANE_K8S_SYSTEM_FILE as string, 'utf8')) as { receiver: ReceiverInfo }).receiver;

/** Every request the receiver has kept. */
function receivedRequests(): Promise<Received[]> {
  return new Promise((resolve, reject) => {
    const req = request({ host: receiver.podIp, port: receiver.port, servername: receiver.host, path: '/received', ca: readFileSync(receiver.ca), timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`the receiver answered ${res.statusCode}`));
        const { items } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items: (Omit<Received, 'body'> & { body: string })[] };
        resolve(items.map((item) => ({ ...item, body: Buffer.from(item.body, 'base64') })));
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Polls the receiver until `match` finds a request (bounded; the condition, never a fixed wait). */
async function waitForRequest(match: (r: Received) => boolean, timeoutMs = 120_000): Promise<Received> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await receivedRequests()).find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`nothing matching arrived at the receiver within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

let system: System;

beforeAll(async () => {
  system = await startSystem({ services: [...API_STACK] });
});

afterAll(async () => {
  await system?.stop();
});

it('delivers an issue event to the HTTPS receiver in the cluster, signed with the webhook secret', async () => {
  const team = await bootstrapTeam(system);
  const client = api(system, team.token);
  const base = `/teams/${team.team_id}`;
  const secret = 'a-signing-secret-for-the-cluster-receiver';
  const path = `/team-${team.team_id}`;
  const webhook = await client.post(`${base}/webhooks`, { url: `${receiver.url}${path}`, events: ['issue.created'], secret });
  expect(webhook.status).toBe(201);
  const organization = await client.post(`${base}/organizations`, { name: 'Cluster' });
  expect(organization.status).toBe(201);
  const project = await client.post(`${base}/organizations/${organization.body.id}/projects`, { name: 'Delivery' });
  expect(project.status).toBe(201);
  const issue = await client.post(`${base}/organizations/${organization.body.id}/projects/${project.body.id}/issues`, { title: 'Delivered in the cluster' });
  expect(issue.status).toBe(201);

  const delivered = await waitForRequest((r) => r.path === path && r.headers['x-webhook-event'] === 'issue.created');
  expect(delivered.method).toBe('POST');
  expect(delivered.headers['x-webhook-signature']).toBe(bodySignature(secret, delivered.body));
  const body = JSON.parse(delivered.body.toString('utf8'));
  expect(body).toEqual(expect.objectContaining({ id: expect.any(String), event: 'issue.created', created_at: expect.any(String), team_id: team.team_id }));
  expect(body.issue).toEqual(expect.objectContaining({ id: issue.body.id, title: 'Delivered in the cluster' }));
});
