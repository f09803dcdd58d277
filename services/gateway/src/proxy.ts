import { Agent as HttpAgent, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { createProxyMiddleware, proxyEventsPlugin, type RequestHandler } from 'http-proxy-middleware';
import { writeServiceUnavailable } from '@worklane/http';
import type { Logger } from '@worklane/observability';

/** Bodies the gateway has read and checked, to be sent to the service byte for byte. */
const checkedBodies = new WeakMap<IncomingMessage, Buffer>();

export function forwardBody(req: IncomingMessage, body: Buffer): void {
  checkedBodies.set(req, body);
  delete req.headers['transfer-encoding'];
  req.headers['content-length'] = String(body.length);
}

/** Who wants to know the size of a request's response, once its service has answered. */
const responseMeters = new WeakMap<IncomingMessage, (bytes: number) => void>();

/**
 * Calls `meter` with the size of the body the service answers to `req`: at once from its
 * Content-Length, else once the body has streamed through. Not called when the service never
 * answers (the gateway's own 503 is small).
 */
export function meterResponse(req: IncomingMessage, meter: (bytes: number) => void): void {
  responseMeters.set(req, meter);
}

function measure(proxyRes: IncomingMessage, meter: (bytes: number) => void): void {
  const declared = Number(proxyRes.headers['content-length']);
  if (Number.isSafeInteger(declared) && declared >= 0) return meter(declared);
  let bytes = 0;
  proxyRes.on('data', (chunk: Buffer) => (bytes += chunk.length));
  proxyRes.once('end', () => meter(bytes));
}

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

/**
 * A proxy to one service. Failures to reach it (refused, reset, no answer within `timeoutMs`)
 * answer the API's one 503 (service_unavailable, Retry-After: `retryAfterSeconds`), for this
 * service's routes only; once the service has started answering, a broken response is cut off
 * rather than completed with something else.
 */
export function createServiceProxy(options: {
  service: string;
  target: string;
  agents: Agents;
  timeoutMs: number;
  retryAfterSeconds: number;
  logger: Logger;
}): RequestHandler<IncomingMessage, ServerResponse> {
  // Once a second at most: an outage fails every request to the service, and one line says so.
  let lastWarning = 0;
  let failures = 0;
  return createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: options.target,
    agent: options.target.startsWith('https:') ? options.agents.https : options.agents.http,
    proxyTimeout: options.timeoutMs,
    // Only the plugin that wires `on`: the default error page and logging are replaced by ours.
    ejectPlugins: true,
    plugins: [proxyEventsPlugin],
    on: {
      proxyReq(proxyReq, req) {
        const body = checkedBodies.get(req);
        // The client's stream was consumed by the checks; the proxy then ends the request.
        if (body) proxyReq.write(body);
      },
      proxyRes(proxyRes, req) {
        const meter = responseMeters.get(req);
        if (meter) measure(proxyRes, meter);
      },
      error(error, req, res) {
        failures += 1;
        if (Date.now() - lastWarning >= 1_000) {
          const code = (error as NodeJS.ErrnoException).code;
          options.logger.warn({ upstream: options.service, code, method: req.method, url: req.url, failures }, 'service unreachable; answering 503');
          lastWarning = Date.now();
          failures = 0;
        }
        if ('setHeader' in res) writeServiceUnavailable(res, options.retryAfterSeconds);
        else (res as Socket).destroy();
      },
    },
  });
}
