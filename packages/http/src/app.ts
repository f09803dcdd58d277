import express, { type ErrorRequestHandler, type Express, type RequestHandler, type Router } from 'express';
import type { PublicKeys } from '@worklane/config';
import { isDependencyUnavailable, type Logger, type ServiceMetrics } from '@worklane/observability';
import { HttpError, notFound, validationFailed } from './errors';
import { FieldErrorCollector } from './field-errors';
import { requireIdentity } from './identity';
import { DEFAULT_INPUT_LIMITS, collectQueryProblems, type InputLimits } from './input-limits';
import { accessLog, requestId, routeOf } from './request-id';
import { DEFAULT_RETRY_AFTER_SECONDS, serviceUnavailable } from './service-unavailable';
import { collectTextProblems } from './text-input';

export interface ServiceAppOptions {
  logger: Logger;
  metrics: ServiceMetrics;
  /**
   * `/readyz`: false while shutting down or when something the process needs for every request
   * (its own database) does not answer; `readiness()` builds it. Never a service it calls.
   */
  isReady: () => boolean | Promise<boolean>;
  /**
   * `Retry-After` seconds of the 503 answered when a dependency is unavailable
   * (UNAVAILABLE_RETRY_AFTER_SECONDS); DEFAULT_RETRY_AFTER_SECONDS when not given.
   */
  retryAfterSeconds?: number;
  /** When set, every `/api` request must carry an identity signed by one of these principals (gateway, console). */
  identityIssuers?: PublicKeys;
  /** Mounts the service's routes. */
  routes: (router: Router) => void;
  /** Largest accepted JSON body. */
  bodyLimit?: string;
  /**
   * Also accept `application/x-www-form-urlencoded` bodies (HTML forms), parsed into `req.body`.
   * Off by default: the API takes JSON only.
   */
  formBodies?: boolean;
  /**
   * Parse request bodies at all (default true). The gateway turns it off: it checks bodies
   * itself and forwards them byte for byte.
   */
  parseBodies?: boolean;
  /** Query limits and how much of a 422 is listed; DEFAULT_INPUT_LIMITS for what is not given. */
  inputLimits?: Partial<InputLimits>;
  /** Log one line per request (the gateway does: the edge sees every request once). */
  accessLog?: boolean;
}

/** Methods whose body, when present, must be JSON. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const hasBody = (req: express.Request) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

const JSON_TYPES = ['application/json', 'application/*+json'];
const FORM_TYPE = 'application/x-www-form-urlencoded';

/** 415 for a body of a type the app does not take, before anything reads it. */
function requireBodyType(types: string[]): RequestHandler {
  return (req, _res, next) => {
    if (BODY_METHODS.has(req.method) && hasBody(req) && !req.is(types)) {
      return next(new HttpError(415, 'The request body must be JSON (Content-Type: application/json).'));
    }
    next();
  };
}

/**
 * 422 for input no route could use: text that PostgreSQL cannot store (U+0000, broken UTF-16) in
 * any string or key of the body or the query, and over-long query parameters. Checked once here,
 * so that no service answers such input with a 500.
 */
function requireUsableInput(limits: InputLimits): RequestHandler {
  return (req, _res, next) => {
    const collector = new FieldErrorCollector();
    if (req.body !== undefined) collectTextProblems(req.body, collector);
    collectQueryProblems(req.query, collector, limits.maxQueryValueLength);
    if (!collector.empty) return next(validationFailed(collector.errors, collector.omitted));
    next();
  };
}

/** Counts and times every request by route template, never by raw path. */
function recordMetrics(metrics: ServiceMetrics): RequestHandler {
  return (req, res, next) => {
    const stop = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      // A handler that routes by itself (the gateway's route table) names the template in res.locals.route.
      const labels = { method: req.method, route: routeOf(req, res), status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      stop(labels);
    });
    next();
  };
}

/** Logs a dependency outage once a second at most: every request fails during one, one line says so. */
function outageLog(logger: Logger): (error: unknown, req: express.Request, res: express.Response) => void {
  let lastAt = 0;
  let since = 0;
  return (error, req, res) => {
    since += 1;
    const now = Date.now();
    if (now - lastAt < 1_000) return;
    logger.warn({ err: error, method: req.method, route: routeOf(req, res), requests: since }, 'a dependency is unavailable; answering 503');
    lastAt = now;
    since = 0;
  };
}

function errorHandler(logger: Logger, limits: InputLimits, retryAfterSeconds: number): ErrorRequestHandler {
  const logOutage = outageLog(logger);
  return (error, req, res, _next) => {
    let httpError: HttpError;
    if (error instanceof HttpError) httpError = error;
    else if (error?.type === 'entity.too.large') httpError = new HttpError(413, 'The request body is too large.');
    else if (error?.type === 'entity.parse.failed') httpError = new HttpError(400, 'The request body is not valid JSON.');
    else if (error?.type === 'encoding.unsupported' || error?.type === 'charset.unsupported') {
      httpError = new HttpError(415, 'The request body encoding is not supported.');
    } else if (isDependencyUnavailable(error)) {
      logOutage(error, req, res);
      httpError = serviceUnavailable(retryAfterSeconds);
    } else {
      logger.error({ err: error, method: req.method, route: routeOf(req, res) }, 'request failed');
      httpError = new HttpError(500, 'Server Error.');
    }
    // Headers already out (a streamed list failing half-way): cut the connection, so that the
    // client sees a broken response rather than a complete-looking truncated one.
    if (res.headersSent) return void res.destroy();
    res.status(httpError.status).set(httpError.headers);
    // Every 503 says when to come back, whoever made it.
    if (httpError.status === 503 && !res.get('Retry-After')) res.set('Retry-After', String(retryAfterSeconds));
    res.json(httpError.boundedBody(limits));
  };
}

/**
 * The express app of a Worklane HTTP service: request metrics, health and readiness, JSON body rules of
 * the public API, signed identity on `/api`, the service's routes, and one JSON error model.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const given = Object.entries(options.inputLimits ?? {}).filter(([, value]) => value !== undefined);
  const limits: InputLimits = { ...DEFAULT_INPUT_LIMITS, ...Object.fromEntries(given) };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestId());
  app.use(recordMetrics(options.metrics));
  if (options.accessLog) app.use(accessLog(options.logger));

  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    const ready = await Promise.resolve()
      .then(options.isReady)
      .catch(() => false);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready' });
  });
  // No /metrics here: metrics are served on the service's own metrics port (serveMetrics).

  if (options.parseBodies ?? true) {
    const limit = options.bodyLimit ?? '1mb';
    app.use(requireBodyType(options.formBodies ? [...JSON_TYPES, FORM_TYPE] : JSON_TYPES));
    app.use(express.json({ limit, strict: false, type: JSON_TYPES }));
    if (options.formBodies) app.use(express.urlencoded({ limit, extended: false, type: FORM_TYPE }));
  }
  if (options.identityIssuers) app.use('/api', requireIdentity(options.identityIssuers));
  // The gateway leaves bodies and queries to the services it forwards them to.
  if (options.parseBodies ?? true) app.use(requireUsableInput(limits));

  const router = express.Router();
  options.routes(router);
  app.use(router);

  app.use(() => {
    throw notFound();
  });
  app.use(errorHandler(options.logger, limits, options.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS));
  return app;
}
