// The gateway's route table (API_ROUTES in packages/http/src/api-routes.ts) against the handlers the
// services really have, both ways:
//   - every public handler of a service is reachable through the gateway: each service's express
//     app, built in-process from its build, is enumerated, and every handler under /api is a route
//     of the table sent to that very service; the console's pages lie outside /api, which the
//     gateway hands to the console whole;
//   - every declared route reaches a real handler: through a real gateway in front of the whole
//     system, each route and method of the table is called with real data and answers 2xx, which
//     only the service's handler gives (the gateway's own answers under /api are errors).
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Express } from 'express';
import { API_ROUTES, API_UPSTREAMS, type ApiRoute } from '@worklane/http';
import { createLogger, createMetrics } from '@worklane/observability';
import { SERVICES, api, bootstrapTeam, publicKeysOf, repoRoot, signingKeyPairs, startSystem, type BootstrapResult, type System } from '@worklane/testing';
import { direct } from './support';

jest.setTimeout(120_000);

interface Handler {
  path: string;
  method: string;
}

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
  slash?: boolean;
  name?: string;
}

/** Every route handler (path and method) registered on an express app, probes included. */
function handlersOf(app: Express): Handler[] {
  const found: Handler[] = [];
  const walk = (stack: RouterLayer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) {
          if (method !== '_all') found.push({ path: layer.route.path, method: method.toUpperCase() });
        }
      } else if (Array.isArray(layer.handle?.stack)) {
        // A router mounted under a prefix would hide the prefix from this walk: refuse it, so that
        // the check never passes on paths it cannot see.
        if (layer.slash === false) throw new Error('a router is mounted under a path prefix: teach handlersOf() to read it');
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: RouterLayer[] } }).router.stack);
  return found;
}

const keys = signingKeyPairs();

/**
 * The HTTP app of a service, built in-process from services/<name>/dist/app.js. Only what the app
 * needs to register its routes is real (logger, metrics, keys); the rest is never called here.
 */
function serviceApp(name: string): Express {
  const file = path.join(repoRoot(), 'services', name, 'dist', 'app.js');
  const { createApp } = createRequire(__filename)(file) as { createApp: (deps: object) => Express | { http: Express } };
  const given: Record<string, unknown> = {
    logger: createLogger(name, 'silent'),
    metrics: createMetrics(name),
    publicKeys: publicKeysOf(keys),
    identityIssuers: publicKeysOf(keys, ['gateway', 'console']),
    isReady: () => true,
  };
  const deps = new Proxy(given, { get: (target, key) => (typeof key === 'string' && key in target ? target[key] : undefined) });
  const built = createApp(deps);
  return 'http' in built ? built.http : built;
}

const PROBES = new Set(['GET /healthz', 'GET /readyz']);
const declared = (upstream: string) => API_ROUTES.filter((route) => route.upstream === upstream).flatMap((route) => route.methods.map((method) => `${method} ${route.template}`));

describe('the route table against the services’ handlers', () => {
  it('names services of the service table that the gateway calls', () => {
    const gateway = SERVICES.find((s) => s.name === 'gateway')!;
    for (const upstream of API_UPSTREAMS) expect(gateway.calls.http).toContain(upstream);
  });

  it.each([...API_UPSTREAMS])('%s: every handler under /api is a route of the table sent to it, and the other way round', (upstream) => {
    const handlers = handlersOf(serviceApp(upstream)).map((h) => `${h.method} ${h.path}`);
    const outsideApi = handlers.filter((h) => !h.split(' ')[1]!.startsWith('/api/') && !PROBES.has(h));
    // A handler outside /api would be unreachable: the gateway sends everything else to the console.
    expect(outsideApi).toEqual([]);
    expect(handlers.filter((h) => h.split(' ')[1]!.startsWith('/api/')).sort()).toEqual(declared(upstream).sort());
  });

  it('leaves nothing under /api to the console, whose pages the gateway forwards whole', () => {
    const pages = handlersOf(serviceApp('console'));
    expect(pages.length).toBeGreaterThan(PROBES.size);
    expect(pages.filter((h) => h.path.startsWith('/api') || h.path.startsWith('/metrics'))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Through a real gateway
// ---------------------------------------------------------------------------------------------

let system: System;
let team: BootstrapResult;

beforeAll(async () => {
  // Webhooks may point at this machine; nothing needs to listen there.
  system = await startSystem({ env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' } });
  team = await bootstrapTeam(system);
});

afterAll(async () => {
  await system?.stop();
});

/** Ids the calls create and later calls use, by path parameter. */
type Ids = Record<string, string>;

interface Call {
  method: ApiRoute['methods'][number];
  template: string;
  body?: unknown;
  /** Keeps an id of the answer for the calls after it. */
  keep?: (body: any, ids: Ids) => void;
}

const TEAM = '/api/v1/teams/:team';
const PROJECT = `${TEAM}/organizations/:organization/projects/:project`;

/** One call per route and method of the table, in an order where each finds what it needs. */
const CALLS: Call[] = [
  { method: 'GET', template: `${TEAM}/organizations` },
  { method: 'POST', template: `${TEAM}/organizations`, body: { name: 'Route table' }, keep: (b, ids) => (ids.organization = String(b.id)) },
  { method: 'POST', template: `${TEAM}/organizations/:organization/projects`, body: { name: 'Routes' }, keep: (b, ids) => (ids.project = String(b.id)) },
  { method: 'GET', template: `${TEAM}/organizations/:organization/projects` },
  { method: 'GET', template: PROJECT },
  { method: 'PATCH', template: PROJECT, body: { name: 'Routes, renamed' } },
  { method: 'POST', template: `${PROJECT}/issues`, body: { title: 'Every route answers' }, keep: (b, ids) => (ids.issue = String(b.id)) },
  { method: 'GET', template: `${PROJECT}/issues` },
  { method: 'GET', template: `${PROJECT}/issues/:issue` },
  { method: 'PATCH', template: `${PROJECT}/issues/:issue`, body: { title: 'Every route answers, checked' } },
  { method: 'POST', template: `${TEAM}/webhooks`, body: { url: 'https://127.0.0.1:9/hook', events: ['issue.created'] }, keep: (b, ids) => (ids.webhook = String(b.id)) },
  { method: 'GET', template: `${TEAM}/webhooks` },
  { method: 'GET', template: `${TEAM}/webhooks/:webhook` },
  { method: 'PATCH', template: `${TEAM}/webhooks/:webhook`, body: { active: true } },
  { method: 'POST', template: `${TEAM}/webhooks/:webhook/secret/rotate`, body: { overlap_seconds: 0 } },
  { method: 'POST', template: `${TEAM}/webhooks/:webhook/ping`, keep: (b, ids) => (ids.delivery = String(b.id)) },
  { method: 'GET', template: `${TEAM}/webhooks/:webhook/deliveries` },
  { method: 'GET', template: `${TEAM}/webhooks/:webhook/health` },
  { method: 'GET', template: `${TEAM}/deliveries/:delivery` },
  { method: 'POST', template: `${TEAM}/deliveries/:delivery/redeliver` },
  {
    method: 'POST',
    template: `${TEAM}/webhooks/:webhook/recover`,
    body: { since: new Date(Date.now() - 3_600_000).toISOString() },
    keep: (b, ids) => (ids.recovery = String(b.id)),
  },
  { method: 'GET', template: `${TEAM}/webhooks/:webhook/recoveries/:recovery` },
  { method: 'DELETE', template: `${TEAM}/webhooks/:webhook` },
];

const key = (method: string, template: string) => `${method} ${template}`;

describe('every route of the table, through the gateway', () => {
  it('has one call below per route and method of the table', () => {
    const table = API_ROUTES.flatMap((route) => route.methods.map((method) => key(method, route.template)));
    expect(CALLS.map((call) => key(call.method, call.template)).sort()).toEqual(table.sort());
  });

  it('reaches the handler of its service: each call answers 2xx', async () => {
    const ids: Ids = { team: String(team.team_id), organization: String(team.organization_id) };
    const client = api(system, team.token);
    const refused: { route: string; status: number; body: unknown }[] = [];
    for (const call of CALLS) {
      const route = key(call.method, call.template);
      const path = call.template.replace(/:(\w+)/g, (_, name: string) => {
        if (!ids[name]) throw new Error(`${route} needs a ${name}, which no call before it kept; refused: ${JSON.stringify(refused)}`);
        return encodeURIComponent(ids[name]!);
      });
      const response = await client.request(call.method, path.replace(/^\/api\/v1/, ''), call.body);
      if (response.status >= 200 && response.status < 300) call.keep?.(response.body, ids);
      else refused.push({ route, status: response.status, body: response.body });
    }
    expect(refused).toEqual([]);
  });

  it("reaches the console's pages outside /api: every page the console has answers HTML through the gateway", async () => {
    const pages = handlersOf(serviceApp('console')).filter((h) => h.method === 'GET' && !PROBES.has(`GET ${h.path}`));
    for (const page of pages) {
      const path = page.path.replace(/:(\w+)/g, '1');
      // Without a session the console shows the page or sends the visitor to sign in (followed);
      // the gateway's own answers are JSON.
      const response = await direct(system.gatewayUrl, 'GET', path, { accept: 'text/html' });
      expect({ path, status: response.status, type: response.headers['content-type']?.split(';')[0] }).toEqual({ path, status: 200, type: 'text/html' });
    }
  });
});
