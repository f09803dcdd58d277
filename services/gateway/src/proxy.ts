import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { writeServiceUnavailable } from '@worklane/http';
import type { Logger } from '@worklane/observability';

/** Connections to the services, kept alive and reused most-recently-used first. */
export interface Agents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

export function createAgents(): Agents {
  const options = { keepAlive: true, maxSockets: 512, maxFreeSockets: 128, scheduling: 'lifo' as const };
  const http = new HttpAgent(options);
  const https = new HttpsAgent(options);
  return { http, https, destroy: () => (http.destroy(), https.destroy()) };
}

/** What a forwarded request carries besides the client's request. */
export interface ForwardOptions {
  /**
   * The body the gateway has read and checked, sent to the service byte for byte (with its
   * Content-Length); when absent, the client's body, if any, streams through.
   */
  body?: Buffer;
  /**
   * Called with the size of the body the service answers: at once from its Content-Length, else
   * once the body has streamed through. Not called when the service never answers (the
   * gateway's own 503 is small).
   */
  meter?: (bytes: number) => void;
}

/** Forwards one request to its service; resolves once the answer is passed on (or refused with 503). */
export type ServiceForwarder = (req: IncomingMessage, res: ServerResponse, options?: ForwardOptions) => Promise<void>;

/**
 * Hop-by-hop headers (RFC 9110 section 7.6.1): they describe one connection, so neither the
 * client's nor the service's are passed on; each side's keep-alive is its own.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);

function measure(proxyRes: IncomingMessage, meter: (bytes: number) => void): void {
  const declared = Number(proxyRes.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared >= 0) return meter(declared);
  let bytes = 0;
  proxyRes.on('data', (chunk: Buffer) => (bytes += chunk.length));
  proxyRes.once('end', () => meter(bytes));
}

/**
 * Forwards requests to one service over the kept-alive agents, with nothing but node:http in
 * between: the client's headers less the hop-by-hop ones, the checked body or the client's stream,
 * and the service's status, headers and body passed straight back. Failures to reach the service
 * (refused, reset, no answer within `timeoutMs`) answer the API's one 503 (service_unavailable,
 * Retry-After: `retryAfterSeconds`), for this service's routes only; once the service has started
 * answering, a broken response is cut off rather than completed with something else.
 */
export function createServiceForwarder(options: {
  service: string;
  target: string;
  agents: Agents;
  timeoutMs: number;
  retryAfterSeconds: number;
  logger: Logger;
}): ServiceForwarder {
  const target = new URL(options.target);
  const secure = target.protocol === 'https:';
  const send = secure ? httpsRequest : httpRequest;
  const agent = secure ? options.agents.https : options.agents.http;
  // An IPv6 literal comes bracketed in a URL, not in a socket address.
  const hostname = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
  const port = Number(target.port) || (secure ? 443 : 80);
  const basePath = target.pathname === '/' ? '' : target.pathname.replace(/\/$/, '');
  // Once a second at most: an outage fails every request to the service, and one line says so.
  let lastWarning = 0;
  let failures = 0;

  function unreachable(error: NodeJS.ErrnoException, req: IncomingMessage, res: ServerResponse): void {
    failures += 1;
    if (Date.now() - lastWarning >= 1_000) {
      options.logger.warn({ upstream: options.service, code: error.code, method: req.method, url: req.url, failures }, 'service unreachable; answering 503');
      lastWarning = Date.now();
      failures = 0;
    }
    if (res.headersSent) res.destroy();
    else writeServiceUnavailable(res, options.retryAfterSeconds);
  }

  return (req, res, forward = {}) =>
    new Promise<void>((resolve) => {
      const headers: OutgoingHttpHeaders = {};
      for (const name in req.headers) if (!HOP_BY_HOP.has(name)) headers[name] = req.headers[name];
      const { body } = forward;
      if (body) {
        delete headers['transfer-encoding'];
        headers['content-length'] = String(body.length);
      } else if ((req.method === 'DELETE' || req.method === 'OPTIONS') && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) {
        headers['content-length'] = '0';
      }
      const proxyReq = send({ hostname, port, agent, method: req.method, path: basePath + req.url, headers });
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        resolve();
      };
      proxyReq.setTimeout(options.timeoutMs, () => proxyReq.destroy(Object.assign(new Error('the service did not answer in time'), { code: 'ETIMEDOUT' })));
      proxyReq.on('error', (error: NodeJS.ErrnoException) => {
        // Only the first failure answers, and none once the client has gone (we cut the call then).
        if (!settled && !clientGone) unreachable(error, req, res);
        settle();
      });
      // The client left: the service's work for it is abandoned too.
      let clientGone = false;
      res.once('close', () => {
        if (!res.writableFinished) {
          clientGone = true;
          proxyReq.destroy();
        }
        settle();
      });
      proxyReq.once('response', (proxyRes) => {
        if (forward.meter) measure(proxyRes, forward.meter);
        res.statusCode = proxyRes.statusCode ?? 502;
        if (proxyRes.statusMessage) res.statusMessage = proxyRes.statusMessage;
        const noBody = proxyRes.statusCode === 204 || proxyRes.statusCode === 304 || req.httpVersion === '1.0';
        for (const name in proxyRes.headers) {
          if (HOP_BY_HOP.has(name) || (noBody && name === 'transfer-encoding')) continue;
          const value = proxyRes.headers[name];
          if (value !== undefined) res.setHeader(name, value);
        }
        // A service that breaks off mid-body: cut the client's response off as well.
        proxyRes.on('error', () => res.destroy());
        proxyRes.once('aborted', () => res.destroy());
        proxyRes.pipe(res);
      });
      if (body) proxyReq.end(body);
      else if (req.readableEnded || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)) proxyReq.end();
      else req.pipe(proxyReq);
    });
}
