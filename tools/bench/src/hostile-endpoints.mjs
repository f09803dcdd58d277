// Worker thread of the isolation benchmark: the webhook receivers of the hostile team, each on its
// own port of 127.0.0.1 (so each is a separate endpoint for whatever per-endpoint budget the
// delivery service keeps), on an event loop of their own so they cannot slow the victim's receiver:
//   - `blackholes` plain TCP listeners that accept connections and never answer (not even TLS);
//   - `slow` HTTPS receivers that answer 204 only after `delayMs`.
// workerData: { cert, key, blackholes, slow, delayMs }. Posts { ready, blackholeUrls, slowUrls },
// answers 'stats' with the counts below and 'close' by dropping every connection and stopping.
import { createServer as createHttpsServer } from 'node:https';
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const { cert, key, blackholes, slow, delayMs } = workerData;
const stats = { blackholeConnections: 0, blackholeOpen: 0, slowRequests: 0, slowAnswered: 0, slowAbandoned: 0 };
const sockets = new Set();
const servers = [];

const listen = (server) =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });

const blackholeUrls = [];
for (let i = 0; i < blackholes; i++) {
  const server = net.createServer((socket) => {
    stats.blackholeConnections += 1;
    stats.blackholeOpen += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined); // read and drop the TLS hello; never answer
    socket.on('close', () => {
      stats.blackholeOpen -= 1;
      sockets.delete(socket);
    });
  });
  servers.push(server);
  blackholeUrls.push(`https://127.0.0.1:${await listen(server)}/never-answers-${i + 1}`);
}

const slowUrls = [];
for (let i = 0; i < slow; i++) {
  const server = createHttpsServer({ cert, key }, (req, res) => {
    stats.slowRequests += 1;
    req.resume();
    const timer = setTimeout(() => {
      stats.slowAnswered += 1;
      res.writeHead(204).end();
    }, delayMs);
    res.on('close', () => {
      if (!res.writableFinished) {
        clearTimeout(timer);
        stats.slowAbandoned += 1;
      }
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => undefined);
  servers.push(server);
  slowUrls.push(`https://127.0.0.1:${await listen(server)}/answers-after-${delayMs}ms-${i + 1}`);
}

parentPort.on('message', async (message) => {
  if (message === 'stats') parentPort.postMessage({ stats: { ...stats } });
  if (message === 'close') {
    for (const socket of sockets) socket.destroy();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(() => resolve()))));
    parentPort.postMessage({ closed: true, stats: { ...stats } });
    parentPort.close();
  }
});
parentPort.postMessage({ ready: true, blackholeUrls, slowUrls });
