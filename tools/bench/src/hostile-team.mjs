// Worker thread of the isolation benchmark: the hostile team's API traffic, on an event loop of
// its own so it cannot hold up the victim's sender in the same process. Waits for 'start', then
// for `seconds`, all at once:
//   - events: issue creates and updates at `eventRate`/s (open loop), spread over `eventTokens`;
//   - abuse: bodies the edge must refuse, at `abuseRate`/s, one kind after another (ABUSE_KINDS);
//   - lists: `listTokens.length` clients paging through the team's largest lists (issues with large
//     descriptions, webhooks, a webhook's deliveries), following Link rel="next".
// Posts { ready }, { started, at } and, once every request it sent has settled, { done, results }.
import { parentPort, workerData } from 'node:worker_threads';

import { keepAliveAgent, nextLink, send, tally } from './http-client.mjs';
import { openLoop } from './stats.mjs';

const { gatewayUrl, teamId, organizationId, eventProjectId, listProjectId, webhookIds, eventTokens, abuseToken, listTokens, eventRate, abuseRate, seconds, maxPagesPerWalk } =
  workerData;

const teamPath = `${gatewayUrl}/api/v1/teams/${teamId}`;
const projectPath = (projectId) => `${teamPath}/organizations/${organizationId}/projects/${projectId}`;
const json = (token, extra = {}) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra });

/** Bodies the edge must refuse, what it should answer, and why. */
const oversized = Buffer.from(JSON.stringify({ title: 'oversized', description: 'x'.repeat(1024 * 1024 + 64 * 1024) }));
const invalidArray = Buffer.from(
  JSON.stringify({ url: 'https://127.0.0.1:9/never', events: Array.from({ length: 28_000 }, () => 'not.an.event'), secret: 'a-secret-of-sixteen-chars' }),
);
const ABUSE_KINDS = [
  { kind: 'body over 1 MiB', expect: 413, method: 'POST', url: () => `${projectPath(eventProjectId)}/issues`, body: oversized, type: 'application/json' },
  {
    kind: 'U+0000 in text fields',
    expect: 422,
    method: 'POST',
    url: () => `${projectPath(eventProjectId)}/issues`,
    body: JSON.stringify({ title: 'nul\u0000title', description: 'bell \u0007 nul \u0000' }),
    type: 'application/json',
  },
  { kind: 'invalid 400 KB array', expect: 422, method: 'POST', url: () => `${teamPath}/webhooks`, body: invalidArray, type: 'application/json' },
  {
    kind: 'text/plain body',
    expect: 415,
    method: 'POST',
    url: () => `${projectPath(eventProjectId)}/issues`,
    body: JSON.stringify({ title: 'sent as text/plain' }),
    type: 'text/plain',
  },
  {
    kind: 'description over its maximum',
    expect: 422,
    method: 'PATCH',
    url: (issueId) => `${projectPath(eventProjectId)}/issues/${issueId}`,
    body: JSON.stringify({ description: 'y'.repeat(70_000) }),
    type: 'application/json',
  },
];

const results = {
  events: { sent: 0, statuses: {}, creates: 0, updates: 0, perToken: eventTokens.map(() => ({ sent: 0, refused429: 0 })) },
  abuse: Object.fromEntries(ABUSE_KINDS.map(({ kind, expect }) => [kind, { expect, sent: 0, statuses: {}, maxResponseBytes: 0 }])),
  lists: { requests: 0, walks: 0, statuses: {}, bytes: 0, maxResponseBytes: 0, maxPagesInWalk: 0, walksCutShort: 0 },
};

// Not capped low: the open loop really fires at its rate however slowly the API answers.
const eventAgent = keepAliveAgent(1_024);
const abuseAgent = keepAliveAgent(16);
const listAgent = keepAliveAgent(Math.max(1, listTokens.length));
const issues = []; // ids of issues the hostile team created, for updates

async function fireEvent(i) {
  const t = i % eventTokens.length;
  const token = eventTokens[t];
  const update = i % 2 === 1 && issues.length > 0;
  const response = update
    ? await send(`${projectPath(eventProjectId)}/issues/${issues[i % issues.length]}`, {
        method: 'PATCH',
        agent: eventAgent,
        headers: json(token),
        body: JSON.stringify({ title: `A ${i}` }),
        keepBody: false,
      })
    : await send(`${projectPath(eventProjectId)}/issues`, {
        method: 'POST',
        agent: eventAgent,
        headers: json(token),
        body: JSON.stringify({ title: `A ${i}`, priority: 'low' }),
        keepBody: true,
      });
  results.events.sent += 1;
  results.events.perToken[t].sent += 1;
  if (update) results.events.updates += 1;
  else results.events.creates += 1;
  tally(results.events.statuses, response.status || response.error);
  if (response.status === 429) results.events.perToken[t].refused429 += 1;
  if (!update && response.status === 201) {
    const id = JSON.parse(response.text).id;
    if (issues.length < 1_000) issues.push(id);
    else issues[i % 1_000] = id;
  }
}

async function fireAbuse(i) {
  const spec = ABUSE_KINDS[i % ABUSE_KINDS.length];
  const record = results.abuse[spec.kind];
  const url = spec.url(issues[0] ?? 1);
  const response = await send(url, { method: spec.method, agent: abuseAgent, headers: json(abuseToken, { 'content-type': spec.type }), body: spec.body });
  record.sent += 1;
  tally(record.statuses, response.status || response.error);
  record.maxResponseBytes = Math.max(record.maxResponseBytes, response.bytes ?? 0);
}

/** Lists to page through, in turn: the large issues, the webhooks, each webhook's deliveries. */
const walks = [`${projectPath(listProjectId)}/issues`, `${teamPath}/webhooks`, ...webhookIds.map((id) => `${teamPath}/webhooks/${id}/deliveries`)];

async function pageThrough(token, deadline, offset) {
  for (let w = offset; Date.now() < deadline; w++) {
    let url = walks[w % walks.length];
    let pages = 0;
    while (url && Date.now() < deadline) {
      const response = await send(url, { agent: listAgent, headers: { authorization: `Bearer ${token}` } });
      results.lists.requests += 1;
      results.lists.bytes += response.bytes ?? 0;
      results.lists.maxResponseBytes = Math.max(results.lists.maxResponseBytes, response.bytes ?? 0);
      tally(results.lists.statuses, response.status || response.error);
      pages += 1;
      url = response.status === 200 ? nextLink(response.headers?.link, url) : undefined;
      if (url && pages >= maxPagesPerWalk) {
        results.lists.walksCutShort += 1;
        url = undefined;
      }
    }
    results.lists.walks += 1;
    results.lists.maxPagesInWalk = Math.max(results.lists.maxPagesInWalk, pages);
  }
}

parentPort.once('message', async (message) => {
  if (message !== 'start') return;
  const at = Date.now();
  parentPort.postMessage({ started: true, at });
  const deadline = at + seconds * 1000;
  const listing = listTokens.map((token, n) => pageThrough(token, deadline, n));
  await Promise.all([openLoop(eventRate, seconds, fireEvent), openLoop(abuseRate, seconds, fireAbuse), ...listing]);
  for (const agent of [eventAgent, abuseAgent, listAgent]) agent.destroy();
  parentPort.postMessage({ done: true, results });
  parentPort.close();
});
parentPort.postMessage({ ready: true });
