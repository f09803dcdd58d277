// The one table of Worklane's services: what each one is called, where it listens, what it stores,
// which image it ships in and what it needs. Everything that lists the services reads it:
// `npm start` (tools/dev), the tests' systems (./system.ts), the services table of
// docs/architecture.md (generated: `npm run generate -w @worklane/testing`), and the checks that
// keep the Helm chart and each service's own configuration defaults in agreement with it
// (./service-table.test.ts).
//
// Adding a service: one entry below plus its folder services/<name>/. The start order, the
// wiring between services and the docs follow from the entry.
//
// This module imports nothing, so a script can read it without the rest of the repository:
//   node -p "JSON.stringify(require('./packages/testing/dist/service-table.js').SERVICES)"

export type ServiceName = 'gateway' | 'token' | 'project' | 'webhook' | 'issue' | 'delivery' | 'console';

/** What a service needs running before it can serve: another service, PostgreSQL or NATS. */
export type Dependency = ServiceName | 'postgres' | 'nats';

export interface ServiceEntry {
  name: ServiceName;
  /** One line: what the service does. */
  summary: string;
  /** Workspace package, in services/<name>/. */
  package: string;
  /** Image name under the registry namespace: `<registry>/<namespace>/<image>:<tag>`. */
  image: string;
  /** HTTP_PORT: the API (if any), /healthz and /readyz. */
  httpPort: number;
  /** GRPC_PORT, for the services that serve gRPC. */
  grpcPort: number | null;
  /** Variable through which clients find the gRPC port (`host:port`). */
  grpcAddrEnv: string | null;
  /**
   * METRICS_PORT: Prometheus /metrics, on a port of its own (never the API port). Distinct per
   * service so that all of them can run on one host; in Kubernetes every pod uses the chart's
   * `metrics.port`.
   */
  metricsPort: number;
  /** PostgreSQL schema the service owns (DATABASE_SCHEMA); null for services without a database. */
  schema: string | null;
  /** Publishes or consumes events on NATS JetStream (NATS_URL). */
  nats: boolean;
  /** Reached from outside the cluster (the ingress routes to it). */
  public: boolean;
  /**
   * Services it calls: over HTTP it finds them through `<NAME>_SERVICE_URL`, over gRPC through
   * their `grpcAddrEnv`.
   */
  calls: { http: readonly ServiceName[]; grpc: readonly ServiceName[] };
  /** Settings it always gets from the stack that runs it, whatever the environment. */
  env: Readonly<Record<string, string>>;
}

export interface ServiceInfo extends Readonly<ServiceEntry> {
  /** What must run before it can be ready: the services it calls, PostgreSQL, NATS (derived). */
  readonly dependsOn: readonly Dependency[];
}

const ENTRIES: readonly ServiceEntry[] = [
  {
    name: 'gateway',
    summary: 'Public HTTP API: authenticates every request with the token service and forwards it; serves the console',
    package: '@worklane/gateway',
    image: 'gateway',
    httpPort: 8080,
    grpcPort: null,
    grpcAddrEnv: null,
    metricsPort: 9180,
    schema: null,
    nats: false,
    public: true,
    calls: { http: ['project', 'webhook', 'issue', 'delivery', 'console'], grpc: ['token'] },
    env: {},
  },
  {
    name: 'token',
    summary: 'Users, teams, API tokens and console sessions (gRPC; HTTP for probes only)',
    package: '@worklane/token',
    image: 'token',
    httpPort: 9101,
    grpcPort: 7001,
    grpcAddrEnv: 'TOKEN_SERVICE_ADDR',
    metricsPort: 9181,
    schema: 'token',
    nats: false,
    public: false,
    calls: { http: [], grpc: [] },
    env: {},
  },
  {
    name: 'project',
    summary: 'Organizations and projects',
    package: '@worklane/project',
    image: 'project',
    httpPort: 8081,
    grpcPort: 7002,
    grpcAddrEnv: 'PROJECT_GRPC_ADDR',
    metricsPort: 9182,
    schema: 'project',
    nats: false,
    public: false,
    calls: { http: [], grpc: [] },
    env: {},
  },
  {
    name: 'webhook',
    summary: 'Webhook subscriptions, their secrets encrypted at rest',
    package: '@worklane/webhook',
    image: 'webhook',
    httpPort: 8082,
    grpcPort: 7003,
    grpcAddrEnv: 'WEBHOOK_GRPC_ADDR',
    metricsPort: 9183,
    schema: 'webhook',
    nats: false,
    public: false,
    calls: { http: [], grpc: [] },
    env: {},
  },
  {
    name: 'issue',
    summary: 'Issues; publishes their events through an outbox',
    package: '@worklane/issue',
    image: 'issue',
    httpPort: 8083,
    grpcPort: null,
    grpcAddrEnv: null,
    metricsPort: 9184,
    schema: 'issue',
    nats: true,
    public: false,
    calls: { http: [], grpc: ['project', 'token'] },
    env: {},
  },
  {
    name: 'delivery',
    summary: 'Signs and POSTs webhooks for the events; the delivery log',
    package: '@worklane/delivery',
    image: 'delivery',
    httpPort: 8084,
    grpcPort: null,
    grpcAddrEnv: null,
    metricsPort: 9185,
    schema: 'delivery',
    nats: true,
    public: false,
    calls: { http: [], grpc: ['webhook'] },
    env: {},
  },
  {
    name: 'console',
    summary: 'The web console: HTML pages over the token service and the API',
    package: '@worklane/console',
    image: 'console',
    httpPort: 8085,
    grpcPort: null,
    grpcAddrEnv: null,
    metricsPort: 9186,
    schema: null,
    nats: false,
    public: true,
    calls: { http: ['project', 'webhook', 'issue', 'delivery'], grpc: ['token'] },
    // Reached through the gateway, which appends the client's address to X-Forwarded-For: trust
    // that one hop, and nothing a client wrote before it. (The chart trusts two behind its ingress.)
    env: { CONSOLE_TRUST_PROXY: '1' },
  },
];

function dependenciesOf(entry: ServiceEntry): Dependency[] {
  const services = [...new Set([...entry.calls.grpc, ...entry.calls.http])];
  return [...(entry.schema !== null ? (['postgres'] as const) : []), ...(entry.nats ? (['nats'] as const) : []), ...services];
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Every service, in the table's order (the order of the docs, the chart and the images). */
export const SERVICES: readonly ServiceInfo[] = deepFreeze(ENTRIES.map((entry) => ({ ...entry, dependsOn: dependenciesOf(entry) })));

/**
 * The order in which the services start: each after every service it calls (the table's order
 * among those that are ready together), so the token service comes first and the gateway last.
 * Throws when the calls form a cycle, which no start order could satisfy.
 */
export function startOrder(services: readonly ServiceInfo[] = SERVICES): ServiceName[] {
  const order: ServiceName[] = [];
  const pending = [...services];
  while (pending.length > 0) {
    const ready = pending.findIndex((service) =>
      service.dependsOn.every((dependency) => dependency === 'postgres' || dependency === 'nats' || order.includes(dependency)),
    );
    if (ready < 0) throw new Error(`the services' calls form a cycle: ${pending.map((service) => service.name).join(', ')}`);
    order.push(pending.splice(ready, 1)[0]!.name);
  }
  return order;
}

/** The start order: token first (everyone authenticates through it), the gateway last. */
export const START_ORDER: readonly ServiceName[] = Object.freeze(startOrder());

export function serviceInfo(name: string): ServiceInfo {
  const info = SERVICES.find((s) => s.name === name);
  if (!info) throw new Error(`unknown service ${name}; known: ${SERVICES.map((s) => s.name).join(', ')}`);
  return info;
}

/** `<NAME>_SERVICE_URL`: where the callers of `name` over HTTP find it. */
export const serviceUrlEnv = (name: ServiceName): string => `${name.toUpperCase()}_SERVICE_URL`;

/** The services some other service calls over HTTP: each gets a `<NAME>_SERVICE_URL`. */
export const HTTP_CALLEES: readonly ServiceName[] = Object.freeze(
  SERVICES.filter((callee) => SERVICES.some((caller) => caller.calls.http.includes(callee.name))).map((s) => s.name),
);

/** The services that serve gRPC. */
export const GRPC_SERVICES: readonly ServiceName[] = Object.freeze(SERVICES.filter((s) => s.grpcPort !== null).map((s) => s.name));
