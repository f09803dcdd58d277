// Worker thread of the chaos benchmark: the misbehaving webhook receivers, each an HTTPS server on
// its own port of 127.0.0.1, on an event loop of their own so they cannot slow the healthy
// receiver in the main thread. Three kinds:
//   - failing: answer 500 at once;
//   - slow: answer 204 after `slowDelayMs`;
//   - limited: answer 204 within the rate limit Worklane promises (a token bucket refilled at
//     `limitPerSecond`, holding one second's worth, docs/webhook-delivery-controls.md) plus one
//     request of room for a request that took longer on its way than the one after it, and 429
//     with Retry-After: 1 beyond it.
// Each kind starts healthy (204 at once) and misbehaves once told to, so the same endpoints serve
// the all-healthy baseline first. Every request that got a 2xx is recorded by the number in its
// event's title, with its event id; every request's arrival time is kept for the limited ones (to
// check the sender's pacing).
//
// workerData: { cert, key, failing, slow, limited, slowDelayMs, limitPerSecond }.
// Posts { ready, urls: { failing: [...], slow: [...], limited: [...] } }. Messages:
//   { behave: { failing?: 'chaos'|'healthy', slow?: …, limited?: … } } -> { behaving }
//   'stats' -> { stats }   'close' -> { closed }
import { createServer } from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';

const { cert, key, failing, slow, limited, slowDelayMs, limitPerSecond } = workerData;
const KINDS = { failing, slow, limited };
const behaviour = { failing: 'healthy', slow: 'healthy', limited: 'healthy' };
const endpoints = []; // { kind, index, url, server, accepted: [[n, eventId, at]], arrivals: [at], answered: {status: count}, bucket }
const sockets = new Set();

/** The number in the title of a delivered issue event ("K <n>") and the event's id, or undefined. */
const titleNumber = (text) => {
  try {
    const body = JSON.parse(text);
    const match = /^K (\d+)$/.exec(body.issue?.title ?? '');
    return match ? { n: Number(match[1]), eventId: body.id } : undefined;
  } catch {
    return undefined;
  }
};

/**
 * Room of a limited endpoint's token bucket: the promised second's worth and one request more. A
 * sender that keeps to the promise, measured when it starts each request, is never refused unless
 * the network holds one request back by more than 1/limitPerSecond against the next.
 */
const BUCKET = limitPerSecond + 1;

/** Takes one request from a token bucket refilled at `limitPerSecond`, holding at most BUCKET. */
function takeToken(bucket, now) {
  bucket.tokens = Math.min(BUCKET, bucket.tokens + ((now - bucket.at) / 1000) * limitPerSecond);
  bucket.at = now;
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

function handler(endpoint) {
  return (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const now = Date.now();
      if (endpoint.kind === 'limited') endpoint.arrivals.push(now);
      const mode = behaviour[endpoint.kind];
      const answer = (status, headers = {}) => {
        endpoint.answered[status] = (endpoint.answered[status] ?? 0) + 1;
        if (status < 300) {
          const event = titleNumber(Buffer.concat(chunks).toString('utf8'));
          if (event) endpoint.accepted.push([event.n, event.eventId, Date.now()]);
        }
        res.writeHead(status, headers).end();
      };
      if (mode === 'healthy') return answer(204);
      if (endpoint.kind === 'failing') return answer(500);
      if (endpoint.kind === 'limited') return takeToken(endpoint.bucket, now) ? answer(204) : answer(429, { 'retry-after': '1' });
      const timer = setTimeout(() => answer(204), slowDelayMs);
      res.on('close', () => {
        if (!res.writableFinished) {
          clearTimeout(timer);
          endpoint.answered.abandoned = (endpoint.answered.abandoned ?? 0) + 1;
        }
      });
    });
  };
}

const listen = (server) =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });

const urls = { failing: [], slow: [], limited: [] };
for (const [kind, count] of Object.entries(KINDS)) {
  for (let index = 0; index < count; index++) {
    const endpoint = { kind, index, accepted: [], arrivals: [], answered: {}, bucket: { tokens: BUCKET, at: Date.now() } };
    endpoint.server = createServer({ cert, key, keepAliveTimeout: 30_000 }, handler(endpoint));
    endpoint.server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    endpoint.server.on('tlsClientError', () => undefined);
    endpoint.url = `https://127.0.0.1:${await listen(endpoint.server)}/${kind}-${index + 1}`;
    urls[kind].push(endpoint.url);
    endpoints.push(endpoint);
  }
}

const stats = () =>
  endpoints.map(({ kind, index, url, accepted, arrivals, answered }) => ({ kind, index, url, accepted: [...accepted], arrivals: [...arrivals], answered: { ...answered } }));

parentPort.on('message', async (message) => {
  if (message?.behave) {
    for (const [kind, mode] of Object.entries(message.behave)) {
      if (!(kind in behaviour) || !['healthy', 'chaos'].includes(mode)) continue;
      behaviour[kind] = mode;
      // A limited endpoint starts its misbehaviour with a full bucket.
      if (kind === 'limited') for (const endpoint of endpoints) if (endpoint.kind === kind) endpoint.bucket = { tokens: BUCKET, at: Date.now() };
    }
    parentPort.postMessage({ behaving: { ...behaviour } });
  }
  if (message === 'stats') parentPort.postMessage({ stats: stats() });
  if (message === 'close') {
    for (const socket of sockets) socket.destroy();
    await Promise.all(endpoints.map(({ server }) => new Promise((resolve) => server.close(() => resolve()))));
    parentPort.postMessage({ closed: true });
    parentPort.close();
  }
});
parentPort.postMessage({ ready: true, urls });
