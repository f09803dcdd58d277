import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { writeServiceUnavailable } from '@worklane/http';
import type { Logger } from '@worklane/observability';

/** Connections to the services, kept alive and reused most-recently-used first. */
export interface Agents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

/**
 * `idleTimeoutMs`: the gateway closes a connection that has waited that long unused itself, so a
 * service that is shutting down (which answers on its open connections for SHUTDOWN_DRAIN_MS,
 * each answer closing its connection, and then closes the idle ones) never closes a connection
 * under a request the gateway is sending: keep it below the services' drain.
 */
export function createAgents(idleTimeoutMs: number): Agents {
  const options = { keepAlive: true, maxSockets: 512, maxFreeSockets: 128, scheduling: 'lifo' as const, timeout: idleTimeoutMs };
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
  /**
   * Which of the client's request headers the service gets (hop-by-hop ones never do); all the
   * others when absent.
   */
  keepHeader?: (name: string) => boolean;
  /** Headers added to the client's ones (lower-case names), replacing any of the same name. */
  extraHeaders?: Readonly<Record<string, string>>;
}

/** Forwards one request to its service; resolves once the answer is passed on (or refused with 503). */
export type ServiceForwarder = (req: IncomingMessage, res: ServerResponse, options?: ForwardOptions) => Promise<void>;

/**
 * Hop-by-hop headers (RFC 9110 section 7.6.1): they describe one connection, so neither the
 * client's nor the service's are passed on; each side's keep-alive is its own.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);

/**
 * The request headers the service gets, built in one pass without touching the client's request:
 * the client's headers that `keepHeader` keeps, less the hop-by-hop ones; the body's
 * Content-Length when the gateway read the body (the client's framing then goes); `extraHeaders`
 * last. (An object, not node:http's flat list, which would save a setHeader per header: the
 * OpenTelemetry instrumentation of node:http copies the headers as an object to add the trace
 * context, which would garble a list.)
 */
function requestHeaders(req: IncomingMessage, forward: ForwardOptions): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const { body, keepHeader, extraHeaders } = forward;
  const incoming = req.headers;
  for (const name in incoming) {
    if (HOP_BY_HOP.has(name) || (keepHeader && !keepHeader(name))) continue;
    if (body && (name === 'content-length' || name === 'transfer-encoding')) continue;
    headers[name] = incoming[name];
  }
  if (body) headers['content-length'] = String(body.length);
  else if ((req.method === 'DELETE' || req.method === 'OPTIONS') && incoming['content-length'] === undefined && incoming['transfer-encoding'] === undefined) {
    headers['content-length'] = '0';
  }
  if (extraHeaders) for (const name in extraHeaders) headers[name] = extraHeaders[name];
  return headers;
}

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
 * Retry-After: `retryAfterSeconds`), for this service's routes only, but for one: a request sent
 * on a kept-alive connection just as the service closed it is sent once more, on a new
 * connection, when that is harmless (replayableRequest); once the service has started
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
      const headers = requestHeaders(req, forward);
      const { body } = forward;
      const bodyless = req.readableEnded || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined);
      let replayable = replayableRequest(req, body !== undefined || bodyless);
      let settled = false;
      const settle = () => {
        if (settled) return;
        settled = true;
        resolve();
      };
      // The client left: the service's work for it is abandoned too.
      let clientGone = false;
      let current: ClientRequest | undefined;
      res.once('close', () => {
        if (!res.writableFinished) {
          clientGone = true;
          current?.destroy();
        }
        settle();
      });

      // `fresh`: on a new connection of its own rather than one from the pool.
      const attempt = (fresh: boolean) => {
        const proxyReq = send({ hostname, port, agent: fresh ? false : agent, method: req.method, path: basePath + req.url, headers });
        current = proxyReq;
        let answered = false;
        proxyReq.setTimeout(options.timeoutMs, () => proxyReq.destroy(Object.assign(new Error('the service did not answer in time'), { code: 'ETIMEDOUT' })));
        proxyReq.on('error', (error: NodeJS.ErrnoException) => {
          if (settled || clientGone || current !== proxyReq) return;
          // A kept-alive connection the service closed as this request went out: the service never
          // read it, so it is sent again once, on a new connection, if sending it twice is harmless.
          if (!answered && replayable && proxyReq.reusedSocket && CLOSED_UNDER_US.has(error.code ?? '')) {
            replayable = false;
            return attempt(true);
          }
          // Only the first failure answers, and none once the client has gone (we cut the call then).
          unreachable(error, req, res);
          settle();
        });
        proxyReq.once('response', (proxyRes) => {
          answered = true;
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
        else if (bodyless) proxyReq.end();
        else req.pipe(proxyReq);
      };
      attempt(false);
    });
}

/** How a pooled connection that the service closed shows up when a request is sent on it. */
const CLOSED_UNDER_US = new Set(['ECONNRESET', 'EPIPE']);

/** Methods whose request may be sent twice with the effect of once (RFC 9110 section 9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/**
 * Whether the gateway may send a request again: its body is at hand (read and checked, or none)
 * and a second copy does no harm: an idempotent method, or an `Idempotency-Key`, which the
 * services answer once per key.
 */
function replayableRequest(req: IncomingMessage, bodyAtHand: boolean): boolean {
  return bodyAtHand && (IDEMPOTENT.has(req.method ?? '') || req.headers['idempotency-key'] !== undefined);
}
