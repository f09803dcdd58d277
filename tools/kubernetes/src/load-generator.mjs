#!/usr/bin/env node
// The load of the cluster phases' fault test: run by the suite inside the cluster's network
// namespace (`nsenter --net=...`), so it reaches the gateway's Service address and nothing else.
//
//   node load-generator.mjs CONFIG_FILE
//
// CONFIG_FILE (JSON): {gatewayUrl, token, teamId, receiverUrl, ratePerSecond, maxInFlight,
// requestTimeoutMs, readyFile, resultFile}. It first makes its own organization, project and a
// webhook to the receiver for issue.created (writing readyFile once they exist), then sends API
// requests at a steady rate, open loop (a slow answer does not slow the schedule, up to
// maxInFlight requests at once): every other one creates an issue (each success is one event the
// receiver must get), the others read an issue list. On SIGTERM it stops sending, waits for the
// requests in flight, and writes every request's outcome to resultFile:
//   {requests: [{at, kind, status, ms, issueId?, error?}], setup: {...}}
import fs from 'node:fs';

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const headers = { authorization: `Bearer ${config.token}`, accept: 'application/json', 'content-type': 'application/json' };
const base = `${config.gatewayUrl}/api/v1/teams/${config.teamId}`;

async function call(method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(config.requestTimeoutMs),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  return { status: response.status, json, text };
}

/** Set-up calls are retried while the release settles (never the measured requests). */
async function setUp(method, path, body) {
  let last = '';
  for (let attempt = 1; attempt <= 30; attempt += 1) {
    try {
      const answer = await call(method, path, body);
      if (answer.status === 201) return answer.json;
      last = `${answer.status} ${answer.text.slice(0, 300)}`;
    } catch (error) {
      last = error.message;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  throw new Error(`${method} ${path}: ${last}`);
}

const organization = await setUp('POST', '/organizations', { name: 'Load' });
const project = await setUp('POST', `/organizations/${organization.id}/projects`, { name: 'Faults' });
const webhook = await setUp('POST', '/webhooks', { url: config.receiverUrl, events: ['issue.created'], secret: 'load-generator-signing-secret' });
const issues = `/organizations/${organization.id}/projects/${project.id}/issues`;
fs.writeFileSync(config.readyFile, JSON.stringify({ organizationId: organization.id, projectId: project.id, webhookId: webhook.id }));

const requests = [];
let inFlight = 0;
let sent = 0;
let stopping = false;

async function one(kind) {
  const started = Date.now();
  const record = { at: started, kind };
  requests.push(record);
  inFlight += 1;
  try {
    const answer = kind === 'create' ? await call('POST', issues, { title: `load ${sent}` }) : await call('GET', `${issues}?limit=5`);
    record.status = answer.status;
    if (kind === 'create' && answer.status === 201) record.issueId = answer.json?.id;
    if (answer.status >= 400) record.error = answer.text.slice(0, 200);
  } catch (error) {
    record.status = 0;
    record.error = error.cause?.code ?? error.message;
  } finally {
    record.ms = Date.now() - started;
    inFlight -= 1;
  }
}

const intervalMs = 1000 / config.ratePerSecond;
const startedAt = Date.now();
const pending = new Set();
const timer = setInterval(
  () => {
    if (stopping) return;
    // Catch up with the schedule (timers are late on a busy machine), as an open-loop load does.
    const due = Math.floor((Date.now() - startedAt) / intervalMs);
    while (sent < due && !stopping) {
      if (inFlight >= config.maxInFlight) {
        requests.push({ at: Date.now(), kind: 'skipped', status: 0, ms: 0, error: `more than ${config.maxInFlight} requests in flight` });
      } else {
        const promise = one(sent % 2 === 0 ? 'create' : 'read');
        pending.add(promise);
        promise.finally(() => pending.delete(promise));
      }
      sent += 1;
    }
  },
  Math.max(5, Math.floor(intervalMs / 2)),
);

process.on('SIGTERM', async () => {
  stopping = true;
  clearInterval(timer);
  await Promise.allSettled([...pending]);
  fs.writeFileSync(config.resultFile, JSON.stringify({ requests, setup: { organizationId: organization.id, projectId: project.id, webhookId: webhook.id } }));
  process.exit(0);
});
