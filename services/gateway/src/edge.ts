import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { DEFAULT_INPUT_LIMITS, HttpError, accessLog, isDependencyUnavailable, requestId, routeOf, serviceUnavailable } from '@worklane/http';
import type { Logger, ServiceMetrics } from '@worklane/observability';

/** A response of the edge path: what express's res.locals carried (route template, team, request id). */
export type EdgeResponse = ServerResponse & { locals: Record<string, unknown> };

export type EdgeHandler = (req: IncomingMessage, res: EdgeResponse) => Promise<void>;

type ExpressArgs<Handler extends (...args: never[]) => unknown> = Parameters<Handler>;

/**
 * Serves API requests on node:http alone, with what the service app gives its express routes:
 * the request id (X-Request-Id, the log context), the request metrics by route template, the access
 * log line, and the API's JSON error for whatever `handle` throws (an HttpError as it is, a
 * dependency outage as 503 with Retry-After, anything else as a logged 500). Express costs every
 * request its router walk; the edge path is most of the gateway's traffic, and all of a hostile
 * client's 429s.
 */
export function edgeHandler(options: { logger: Logger; metrics: ServiceMetrics; retryAfterSeconds: number }, handle: EdgeHandler): RequestListener {
  const { logger, metrics, retryAfterSeconds } = options;
  const assignRequestId = requestId();
  const logAccess = accessLog(logger);
  let lastOutageLog = 0;
  let outageRequests = 0;

  function fail(error: unknown, req: IncomingMessage, res: EdgeResponse): void {
    let httpError: HttpError;
    if (error instanceof HttpError) httpError = error;
    else if (isDependencyUnavailable(error)) {
      outageRequests += 1;
      if (Date.now() - lastOutageLog >= 1_000) {
        logger.warn({ err: error, method: req.method, route: res.locals.route, requests: outageRequests }, 'a dependency is unavailable; answering 503');
        lastOutageLog = Date.now();
        outageRequests = 0;
      }
      httpError = serviceUnavailable(retryAfterSeconds);
    } else {
      logger.error({ err: error, method: req.method, route: res.locals.route }, 'request failed');
      httpError = new HttpError(500, 'Server Error.');
    }
    // Headers already out: cut the connection rather than complete a truncated response.
    if (res.headersSent) return void res.destroy();
    const body = JSON.stringify(httpError.boundedBody(DEFAULT_INPUT_LIMITS));
    res.statusCode = httpError.status;
    for (const [name, value] of Object.entries(httpError.headers)) res.setHeader(name, value);
    if (httpError.status === 503 && !res.hasHeader('retry-after')) res.setHeader('Retry-After', String(retryAfterSeconds));
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  }

  return (req, plain) => {
    const res = plain as EdgeResponse;
    res.locals = {};
    const stop = metrics.httpDuration.startTimer();
    res.once('finish', () => {
      const labels = { method: req.method ?? '', route: routeOf(...([req, res] as unknown as ExpressArgs<typeof routeOf>)), status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      stop(labels);
    });
    const run = () => {
      handle(req, res).catch((error: unknown) => fail(error, req, res));
    };
    if (logger.isLevelEnabled('info')) logAccess(...([req, res, () => undefined] as unknown as ExpressArgs<typeof logAccess>));
    assignRequestId(...([req, res, run] as unknown as ExpressArgs<typeof assignRequestId>));
  };
}
