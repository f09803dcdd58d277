import { randomUUID } from 'node:crypto';
import { context, createContextKey, trace, type Span } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { runInRequestContext, type Logger } from '@worklane/observability';

/** The header that names one request from the client to every service it reaches, and back. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A request id a caller may choose: 1 to 128 letters, digits and `. _ : -` (UUIDs, ULIDs, most
 * tracing ids). Anything else is replaced, never echoed, so a header cannot smuggle text into
 * logs or responses.
 */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const isValidRequestId = (value: unknown): value is string => typeof value === 'string' && REQUEST_ID.test(value);

/** The span attribute that carries the request id. */
export const REQUEST_ID_ATTRIBUTE = 'worklane.request_id';

/**
 * Where the HTTP instrumentation keeps the request's server span (the key @opentelemetry/core's
 * getRPCMetadata reads): the span a trace search finds the request by. Inside express the active
 * span is the current middleware's.
 */
const RPC_METADATA = createContextKey('OpenTelemetry SDK Context Key RPC_METADATA');

/** The request's HTTP server span when tracing is on, else the active span, if any. */
function requestSpan(): Span | undefined {
  const metadata = context.active().getValue(RPC_METADATA) as { span?: Span } | undefined;
  return metadata?.span ?? trace.getActiveSpan();
}

/**
 * Gives every request an id: the caller's `X-Request-Id` when it is well formed, else a new UUID.
 * It is returned on the response, kept in `res.locals.requestId` (the gateway forwards it to the
 * services), set on the request's server span, and carried by every log line written while the request is
 * served (the logger reads it from the request context).
 */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const given = req.headers[REQUEST_ID_HEADER];
    const id = isValidRequestId(given) ? given : randomUUID();
    req.headers[REQUEST_ID_HEADER] = id;
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    requestSpan()?.setAttribute(REQUEST_ID_ATTRIBUTE, id);
    runInRequestContext({ requestId: id }, next);
  };
}

/** The route template of a request, as metrics and the access log name it; never the raw path. */
export function routeOf(req: Parameters<RequestHandler>[0], res: Parameters<RequestHandler>[1]): string {
  if (typeof res.locals.route === 'string') return res.locals.route;
  return req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
}

/** Probes come every few seconds from the orchestrator and say nothing about clients. */
const PROBES = new Set(['/healthz', '/readyz']);

/**
 * One structured line per request when it ends: method, route template (never the path with its
 * ids or query), status, duration, the caller's team when known (`res.locals.teamId`), and the
 * request id; `aborted` when the client left first. Never a header, a token or a body. Logged at
 * `info` (LOG_LEVEL=warn turns it off). The health probes (/healthz, /readyz) are not logged.
 */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    if (PROBES.has(req.path)) return next();
    const started = process.hrtime.bigint();
    let logged = false;
    const log = () => {
      if (logged) return;
      logged = true;
      const teamId = res.locals.teamId;
      const line = () =>
        logger.info(
          {
            method: req.method,
            route: routeOf(req, res),
            status: res.statusCode,
            duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 10_000) / 100,
            ...(typeof teamId === 'number' ? { team_id: teamId } : {}),
            ...(res.writableFinished ? {} : { aborted: true }),
          },
          'request',
        );
      // The line carries the request id like every other line of the request (the logger's mixin).
      const id = res.locals.requestId;
      if (typeof id === 'string') runInRequestContext({ requestId: id }, line);
      else line();
    };
    res.once('finish', log);
    res.once('close', log);
    next();
  };
}
