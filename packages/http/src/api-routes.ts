/** The services behind the gateway that serve the public API. */
export const API_UPSTREAMS = ['project', 'webhook', 'issue', 'delivery'] as const;
export type ApiUpstream = (typeof API_UPSTREAMS)[number];

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface ApiRoute {
  /** Express-style template; also the `route` label of metrics. */
  template: string;
  methods: readonly Method[];
  upstream: ApiUpstream;
}

const TEAM = '/api/v1/teams/:team';
const PROJECT = `${TEAM}/organizations/:organization/projects/:project`;

/**
 * Every route of the public API (the README's "The API" table) and the service
 * that answers it. Anything else under /api is 404, a known path with another method 405.
 */
export const API_ROUTES: readonly ApiRoute[] = [
  { template: `${TEAM}/organizations`, methods: ['GET', 'POST'], upstream: 'project' },
  { template: `${TEAM}/organizations/:organization/projects`, methods: ['GET', 'POST'], upstream: 'project' },
  { template: PROJECT, methods: ['GET', 'PATCH'], upstream: 'project' },
  { template: `${PROJECT}/issues`, methods: ['GET', 'POST'], upstream: 'issue' },
  { template: `${PROJECT}/issues/:issue`, methods: ['GET', 'PATCH'], upstream: 'issue' },
  { template: `${TEAM}/webhooks`, methods: ['GET', 'POST'], upstream: 'webhook' },
  { template: `${TEAM}/webhooks/:webhook`, methods: ['GET', 'PATCH', 'DELETE'], upstream: 'webhook' },
  { template: `${TEAM}/webhooks/:webhook/secret/rotate`, methods: ['POST'], upstream: 'webhook' },
  { template: `${TEAM}/webhooks/:webhook/ping`, methods: ['POST'], upstream: 'delivery' },
  { template: `${TEAM}/webhooks/:webhook/deliveries`, methods: ['GET'], upstream: 'delivery' },
  { template: `${TEAM}/webhooks/:webhook/recover`, methods: ['POST'], upstream: 'delivery' },
  { template: `${TEAM}/webhooks/:webhook/recoveries/:recovery`, methods: ['GET'], upstream: 'delivery' },
  { template: `${TEAM}/webhooks/:webhook/health`, methods: ['GET'], upstream: 'delivery' },
  { template: `${TEAM}/deliveries/:delivery`, methods: ['GET'], upstream: 'delivery' },
  { template: `${TEAM}/deliveries/:delivery/redeliver`, methods: ['POST'], upstream: 'delivery' },
];

/** A route the gateway answers itself, without a token. */
export interface PublicApiRoute {
  template: string;
  methods: readonly Method[];
  /** What it serves. */
  serves: 'api-description' | 'api-reference';
}

/**
 * The public routes under /api: the API's own description (the OpenAPI document of
 * packages/api-contract) and its reference page. Served by the gateway without authentication
 * or rate limiting; they hold nothing of any team.
 */
export const PUBLIC_API_ROUTES: readonly PublicApiRoute[] = [
  { template: '/api/v1/openapi.json', methods: ['GET'], serves: 'api-description' },
  { template: '/api/v1/reference', methods: ['GET'], serves: 'api-reference' },
];

export type PublicRouteMatch = { kind: 'matched'; route: PublicApiRoute } | { kind: 'method-not-allowed'; route: PublicApiRoute; allow: string };

/** The public route of a path (one trailing slash ignored), or undefined. HEAD is answered as GET. */
export function matchPublicApiRoute(method: string, path: string): PublicRouteMatch | undefined {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const route = PUBLIC_API_ROUTES.find((candidate) => candidate.template === trimmed);
  if (!route) return undefined;
  const effective = method === 'HEAD' ? 'GET' : method;
  if ((route.methods as readonly string[]).includes(effective)) return { kind: 'matched', route };
  return { kind: 'method-not-allowed', route, allow: [...route.methods, 'HEAD'].join(', ') };
}

/** Ids are positive integers (as `idParam` reads them); delivery ids are opaque URL-safe strings. */
const INTEGER_ID = /^[1-9]\d{0,15}$/;
const PARAM_PATTERNS: Record<string, RegExp> = { delivery: /^[A-Za-z0-9_-]{1,128}$/ };

interface CompiledRoute {
  route: ApiRoute;
  /** Literal segments as strings, parameters as their names prefixed with ':'. */
  segments: string[];
  allow: string;
}

const compiled: CompiledRoute[] = API_ROUTES.map((route) => ({
  route,
  segments: route.template.split('/').slice(1),
  // The services answer HEAD wherever they answer GET, and list it last, as express does.
  allow: [...route.methods, ...(route.methods.includes('GET') ? ['HEAD'] : [])].join(', '),
}));

export type RouteMatch =
  { kind: 'matched'; route: ApiRoute; params: Record<string, string> } | { kind: 'method-not-allowed'; route: ApiRoute; allow: string } | { kind: 'not-found' };

const NOT_FOUND: RouteMatch = { kind: 'not-found' };

function paramMatches(name: string, value: string): boolean {
  const pattern = PARAM_PATTERNS[name];
  if (pattern) return pattern.test(value);
  return INTEGER_ID.test(value) && Number.isSafeInteger(Number(value));
}

function matchSegments(route: CompiledRoute, parts: string[]): Record<string, string> | undefined {
  if (parts.length !== route.segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const segment = route.segments[i]!;
    const part = parts[i]!;
    if (segment.startsWith(':')) {
      const name = segment.slice(1);
      if (!paramMatches(name, part)) return undefined;
      params[name] = part;
    } else if (segment !== part) {
      return undefined;
    }
  }
  return params;
}

/**
 * The route a request path (without query string) and method select. Paths are compared as
 * sent: encoded, dotted or doubled segments match nothing, so what is checked here is exactly
 * what the service routes on. One trailing slash is ignored, as express does.
 */
export function matchApiRoute(method: string, path: string): RouteMatch {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const parts = trimmed.split('/').slice(1);
  const effective = method === 'HEAD' ? 'GET' : method;
  for (const candidate of compiled) {
    const params = matchSegments(candidate, parts);
    if (!params) continue;
    if ((candidate.route.methods as readonly string[]).includes(effective)) return { kind: 'matched', route: candidate.route, params };
    return { kind: 'method-not-allowed', route: candidate.route, allow: candidate.allow };
  }
  return NOT_FOUND;
}
