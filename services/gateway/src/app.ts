import type { IncomingMessage, RequestListener } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Signer } from '@worklane/config';
import {
  DEFAULT_RETRY_AFTER_SECONDS,
  HttpError,
  badRequest,
  createServiceApp,
  forbidden,
  matchApiRoute,
  matchPublicApiRoute,
  notFound,
  serviceUnavailable,
  signIdentity,
  type ApiUpstream,
} from '@worklane/http';
import type { Logger, ServiceMetrics } from '@worklane/observability';
import { apiDescriptionHandler, type ApiDescription } from './api-description';
import type { TokenAuthenticator } from './authenticate';
import { readJsonBody } from './body';
import { edgeHandler, type EdgeResponse } from './edge';
import { createServiceForwarder, type Agents, type ServiceForwarder } from './proxy';
import { extraResponseUnits, rateLimitHeaders, takeEach, type RateLimiter, type RefusalPacing } from './rate-limit';

export type Upstream = ApiUpstream | 'console';

export interface AppDeps {
  logger: Logger;
  metrics: ServiceMetrics;
  /** The gateway's own key: it signs the identity each API request forwards (only the gateway and console mint identities). */
  identitySigner: Signer;
  authenticator: TokenAuthenticator;
  /** Requests per token. */
  rateLimiter: RateLimiter;
  /** Requests per team, every token of the team together: more tokens buy no more capacity. */
  teamRateLimiter: RateLimiter;
  /** A response counts as one request per started this many bytes (0: every response counts as one). */
  responseUnitBytes?: number;
  /** When refusals are answered; at once when not given. */
  refusalPacing?: RefusalPacing;
  /** Base URLs of the services; a missing one makes its routes answer 503 (the console's, 404). */
  upstreams: Partial<Record<Upstream, string>>;
  agents: Agents;
  upstreamTimeoutMs: number;
  /** Retry-After of the 503 a request gets when its service or the token service cannot answer (UNAVAILABLE_RETRY_AFTER_SECONDS). */
  retryAfterSeconds?: number;
  /** Largest request body in bytes (413 above it); 1 MiB when not given. */
  bodyLimitBytes?: number;
  /** The gateway's own readiness: never a service behind it (one that is down answers 503 for its own routes). */
  isReady: () => boolean | Promise<boolean>;
  /** The OpenAPI document and reference page, served without a token; 404 when not given. */
  apiDescription?: ApiDescription;
}

const unauthenticated = () => new HttpError(401, 'Unauthenticated.', undefined, { 'WWW-Authenticate': 'Bearer realm="worklane"' });
const methodNotAllowed = (allow: string) => new HttpError(405, 'Method not allowed.', undefined, { Allow: allow });
/**
 * The 429, written straight to the response: a client over its allowance may send thousands of
 * requests a second, and each refusal should cost no more than its headers (no error object, no
 * serialisation: the body is the same bytes every time).
 */
const TOO_MANY_REQUESTS_BODY = Buffer.from(JSON.stringify(new HttpError(429, 'Too many requests.').body));
function refuseRate(res: EdgeResponse, retryAfterSeconds: number): void {
  res.statusCode = 429;
  res.setHeader('Retry-After', String(retryAfterSeconds));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', TOO_MANY_REQUESTS_BODY.length);
  res.end(TOO_MANY_REQUESTS_BODY);
}

/**
 * Identity travels in x-worklane-* headers that only the gateway may set. `Expect: 100-continue`
 * was answered here; passed on, it would make the proxy hold back the body it already read.
 */
function stripClientHeaders(req: IncomingMessage): void {
  for (const name of Object.keys(req.headers)) if (name.startsWith('x-worklane-')) delete req.headers[name];
  delete req.headers.expect;
}

/**
 * Which of an API request's own headers its service gets: never the caller's credentials (the
 * service sees only the identity they resolved to), identity headers (only the gateway sets
 * them), `Expect: 100-continue` (answered here; passed on, it would make the proxy hold back the
 * body it already read), nor X-Forwarded-For, which apiForwardedHeaders extends.
 */
const keepApiHeader = (name: string) => !(name.startsWith('x-worklane-') || name === 'authorization' || name === 'cookie' || name === 'expect' || name === 'x-forwarded-for');

/** The headers addForwardedHeaders sets, for an API request, leaving the request as it came. */
function apiForwardedHeaders(req: IncomingMessage): Record<string, string> {
  const remote = req.socket.remoteAddress ?? '';
  const previous = req.headers['x-forwarded-for'];
  const headers: Record<string, string> = { 'x-forwarded-for': previous ? `${previous}, ${remote}` : remote };
  if (req.headers['x-forwarded-proto'] === undefined) headers['x-forwarded-proto'] = 'http';
  if (req.headers['x-forwarded-host'] === undefined && req.headers.host) headers['x-forwarded-host'] = req.headers.host;
  return headers;
}

/** Appends this hop to X-Forwarded-For and says how the client reached us, as proxies do. */
function addForwardedHeaders(req: IncomingMessage): void {
  const remote = req.socket.remoteAddress ?? '';
  const previous = req.headers['x-forwarded-for'];
  req.headers['x-forwarded-for'] = previous ? `${previous}, ${remote}` : remote;
  req.headers['x-forwarded-proto'] ??= 'http';
  if (req.headers.host) req.headers['x-forwarded-host'] ??= req.headers.host;
}

const isApiPath = (url: string) => url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');

/** /metrics in any case, with or without a trailing slash or a query. */
const isMetricsPath = (url: string) => /^\/metrics\/?$/i.test(url.split('?', 1)[0]!);

/**
 * The public entry point. Under /api: the API's description without a token (PUBLIC_API_ROUTES), route table (404, 405), authentication of every request by
 * the token service (401, 503 when it cannot answer), the token's team (403), the rate of the token and of its team (429,
 * answered once the allowance has room again when refusalPacing is given; a large response spends more of it afterwards;
 * every answer after authentication carries RateLimit-Limit, -Remaining and -Reset of the tighter allowance),
 * body checks (400, 413, 415), then the request goes to its service with a signed identity.
 * Everything else goes to the console, which authenticates with its own sessions.
 */
export function createApp(deps: AppDeps): RequestListener {
  const retryAfterSeconds = deps.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS;
  const unavailable = () => serviceUnavailable(retryAfterSeconds);
  const forwarders: Partial<Record<Upstream, ServiceForwarder>> = {};
  for (const [service, target] of Object.entries(deps.upstreams) as [Upstream, string | undefined][]) {
    if (target) forwarders[service] = createServiceForwarder({ service, target, agents: deps.agents, timeoutMs: deps.upstreamTimeoutMs, retryAfterSeconds, logger: deps.logger });
  }

  const describeApi = deps.apiDescription ? apiDescriptionHandler(deps.apiDescription) : undefined;

  /** The API's description: public, served by express. */
  function publicApi(req: Request, res: Response): void {
    const publicRoute = matchPublicApiRoute(req.method, req.url.split('?', 1)[0]!);
    if (!publicRoute) throw notFound();
    res.locals.route = publicRoute.route.template;
    if (publicRoute.kind === 'method-not-allowed') throw methodNotAllowed(publicRoute.allow);
    if (describeApi?.(publicRoute.route, res)) return;
    throw notFound();
  }

  /** Every other API request, on the edge path (node:http alone). */
  async function api(req: IncomingMessage, res: EdgeResponse): Promise<void> {
    const url = req.url!;
    const method = req.method!;
    const match = matchApiRoute(method, url.split('?', 1)[0]!);
    if (match.kind === 'not-found') throw notFound();
    res.locals.route = match.route.template;
    if (match.kind === 'method-not-allowed') throw methodNotAllowed(match.allow);

    const authentication = await deps.authenticator.authenticate(req.headers.authorization);
    if (authentication.outcome === 'refused') throw unauthenticated();
    if (authentication.outcome === 'unavailable') throw unavailable();
    const { identity } = authentication;
    res.locals.teamId = identity.teamId;
    // Whether or not that team exists: a token sees its own team only.
    // Every answer from here on tells the token where its allowances stand (RateLimit-* headers).
    const allowances = [
      [deps.rateLimiter, identity.tokenId],
      [deps.teamRateLimiter, identity.teamId],
    ] as const;
    const tellAllowance = (decision?: Parameters<typeof rateLimitHeaders>[1]) => {
      const headers = rateLimitHeaders(allowances, decision);
      if (headers && !res.headersSent) for (const name in headers) res.setHeader(name, headers[name]!);
    };
    if (match.params.team !== String(identity.teamId)) {
      tellAllowance();
      throw forbidden();
    }
    const rate = takeEach(allowances);
    tellAllowance(rate);
    if (!rate.allowed) {
      await deps.refusalPacing?.hold(rate.waitMs);
      return refuseRate(res, rate.retryAfterSeconds);
    }
    const unitBytes = deps.responseUnitBytes;
    const meter = unitBytes
      ? (bytes: number) => {
          const extra = extraResponseUnits(bytes, unitBytes);
          if (extra <= 0) return;
          deps.rateLimiter.spend(identity.tokenId, extra);
          deps.teamRateLimiter.spend(identity.teamId, extra);
          // Called before the service's headers are passed on when it declared its length.
          tellAllowance();
        }
      : undefined;

    const forward = forwarders[match.route.upstream];
    if (!forward) throw unavailable();
    const body = await readJsonBody(req, deps.bodyLimitBytes);
    // The client's headers less its credentials and any identity it claims (keepApiHeader), then
    // this hop and the identity the gateway signs.
    const extraHeaders = Object.assign(apiForwardedHeaders(req), signIdentity(deps.identitySigner, method, url, identity));
    await forward(req, res, { body, meter, keepHeader: keepApiHeader, extraHeaders });
  }

  async function toConsole(req: Request, res: Response, next: NextFunction): Promise<void> {
    const forward = forwarders.console;
    if (!forward) return next();
    res.locals.route = 'console';
    addForwardedHeaders(req);
    await forward(req, res);
  }

  const app = createServiceApp({
    logger: deps.logger,
    metrics: deps.metrics,
    isReady: deps.isReady,
    retryAfterSeconds,
    parseBodies: false,
    // One line per request at the edge; the services' own lines carry the same request id.
    accessLog: true,
    routes: (router) => {
      router.use((req, res, next) => {
        // Absolute-form and `*` targets are for forward proxies; routing here reads paths only.
        if (!req.url.startsWith('/')) throw badRequest('The request target must be a path.');
        stripClientHeaders(req);
        // Metrics live on each service's metrics port, never on the public one: not forwarded anywhere.
        if (isMetricsPath(req.url)) throw notFound();
        if (isApiPath(req.url)) return publicApi(req, res);
        return toConsole(req, res, next);
      });
    },
  });
  // The same request id, metrics, access log line and errors as the express app gives its routes.
  const edge = edgeHandler({ logger: deps.logger, metrics: deps.metrics, retryAfterSeconds }, api);
  return (req, res) => {
    const url = req.url ?? '';
    // The API's own routes take the edge path; its public description, the probes and the console, express.
    if (isApiPath(url) && !matchPublicApiRoute(req.method ?? 'GET', url.split('?', 1)[0]!)) return edge(req, res);
    app(req, res);
  };
}
