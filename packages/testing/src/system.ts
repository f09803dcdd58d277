import { GRPC_SERVICES, SERVICES, START_ORDER, serviceInfo, stopStages, type ServiceName } from '@worklane/config';

import { createTestDatabase, type TestDatabase } from './database';
import { randomKey, signingKeyPairs } from './keys';
import { freePorts, reportsAddressInUse } from './ports';
import { startService, type EnvInput, type ServiceHandle, type StartServiceOptions } from './service';
import { privateEnv, serviceEnv, sharedEnv, type Env, type Keys, type Ports } from './services';

export interface StartSystemOptions {
  /** Services to start (default: all). The token service starts first, the gateway last. */
  services?: readonly ServiceName[];
  /** Added to every service's environment (e.g. WEBHOOK_ALLOWED_CIDRS, LOG_LEVEL). */
  env?: EnvInput;
  /** Per-service additions, applied after `env`. */
  serviceEnv?: Partial<Record<ServiceName, EnvInput>>;
  /**
   * Path each service must answer 200 on before the system is returned (default `/readyz`; for
   * the gateway `/readyz` only when every service runs, else `/healthz`).
   */
  readyPaths?: Partial<Record<ServiceName, string>>;
  /** Per-service readiness timeout (default 30 s). */
  readyTimeoutMs?: number;
}

export interface System {
  /** http://127.0.0.1:<port> of the (first) gateway; set even when the gateway is not started. */
  gatewayUrl: string;
  /** HTTP base URL of every service (started or not), by name. */
  urls: Record<ServiceName, string>;
  /** http://127.0.0.1:<METRICS_PORT> of each service: scrape `${metricsUrls[name]}/metrics`. */
  metricsUrls: Record<ServiceName, string>;
  /** host:port of the gRPC services (those with a gRPC port in the service table). */
  grpcAddrs: { token: string; project: string; webhook: string } & Partial<Record<ServiceName, string>>;
  /**
   * The environment shared by all services (DATABASE_URL, NATS_URL, keys, addresses): pass it to
   * startService() to add a replica, e.g. `startService('gateway', system.env)`.
   */
  env: Env;
  /** Each service's full environment (shared + its own ports and schema). */
  serviceEnv: Record<ServiceName, Env>;
  /** Handles of the services started by startSystem() (first instance of each). */
  services: Partial<Record<ServiceName, ServiceHandle>>;
  /** Every process started through this system, replicas included. */
  all: ServiceHandle[];
  databaseUrl: string;
  natsUrl: string | undefined;
  keys: Keys;
  database: TestDatabase;
  /** Starts another instance of `name` wired into this system on fresh ports; stopped by stop(). */
  startService(name: ServiceName, env?: EnvInput, options?: StartServiceOptions): Promise<ServiceHandle>;
  /** Stops every service (gateway first, token last) and drops the database. */
  stop(): Promise<void>;
}

/** How many times a system is started on new ports when a port chosen for it was taken meanwhile. */
const START_ATTEMPTS = 3;

/** Started first, alone (token: everyone authenticates through it) and last, alone (the gateway). */
const FIRST = START_ORDER[0]!;
const LAST = START_ORDER[START_ORDER.length - 1]!;

/**
 * Starts `services` wired together exactly as `npm start` wires them (./services.ts, which
 * tools/dev/src/services.mjs loads), but on free ports, with a fresh database
 * (createTestDatabase), fresh signing key pairs (each service gets only its own private key), a
 * random WEBHOOK_SECRET_KEY, and NATS_URL from the environment.
 */
export async function startSystem(options: StartSystemOptions = {}): Promise<System> {
  const wanted = new Set<ServiceName>(options.services ?? START_ORDER);
  for (const name of wanted) {
    if (!SERVICES.some((s) => s.name === name)) throw new Error(`startSystem: unknown service ${name}`);
  }
  const extra: Env = {};
  for (const [k, v] of Object.entries(options.env ?? {})) if (v !== undefined && v !== null) extra[k] = String(v);

  const natsUrl = extra.NATS_URL ?? process.env.NATS_URL;
  const needsNats = SERVICES.filter((s) => s.nats && wanted.has(s.name)).map((s) => s.name);
  if (!natsUrl && needsNats.length > 0) {
    throw new Error(`NATS_URL is not set, and ${needsNats.join(', ')} need NATS: run the tests through \`npm test\`.`);
  }

  const keys: Keys = {
    signing: signingKeyPairs(),
    webhookSecretKey: extra.WEBHOOK_SECRET_KEY ?? randomKey(),
  };
  const database = extra.DATABASE_URL ? { name: '', url: extra.DATABASE_URL, drop: async () => undefined } : await createTestDatabase();
  try {
    for (let attempt = 1; ; attempt += 1) {
      const ports = await choosePorts();
      try {
        return await startOnPorts({ options, extra, natsUrl, wanted, database, keys, ports });
      } catch (err) {
        // Another process took one of the chosen ports before its service listened on it.
        if (attempt >= START_ATTEMPTS || !reportsAddressInUse(String((err as Error)?.message))) throw err;
      }
    }
  } catch (err) {
    await database.drop().catch(() => undefined);
    throw err;
  }
}

/** A free HTTP and metrics port for every service, and a gRPC port for those that serve gRPC. */
async function choosePorts(): Promise<Ports> {
  const count = SERVICES.reduce((n, s) => n + 2 + (s.grpcPort !== null ? 1 : 0), 0);
  const free = await freePorts(count);
  return Object.fromEntries(
    SERVICES.map((s) => [s.name, { http: free.shift() as number, grpc: s.grpcPort !== null ? (free.shift() as number) : null, metrics: free.shift() as number }]),
  ) as Ports;
}

interface Wiring {
  options: StartSystemOptions;
  extra: Env;
  natsUrl: string | undefined;
  wanted: Set<ServiceName>;
  database: TestDatabase;
  keys: Keys;
  ports: Ports;
}

/** Starts the wanted services on `ports`; on failure stops those it started (the database stays). */
async function startOnPorts({ options, extra, natsUrl, wanted, database, keys, ports }: Wiring): Promise<System> {
  const envs = serviceEnv({ databaseUrl: database.url, natsUrl, keys, ports });
  // A test system stops with its suite, while the suite's clients (and the readiness checks of
  // startService) still hold idle connections that would keep each service draining for the whole
  // of its SHUTDOWN_DRAIN_MS, stage after stage of stop(): no drain here (the shutdown tests set
  // the drain they test).
  const harness: Env = { SHUTDOWN_DRAIN_MS: '0' };
  const shared: Env = { ...harness, ...sharedEnv({ databaseUrl: database.url, natsUrl, keys, ports }), ...extra };
  // The system's own gateway lets the tests' bursts through (suites create hundreds of objects
  // back to back); the rates stay the defaults. The rate-limit tests start gateways of their own
  // with the limits they test (startService takes none of these).
  envs.gateway = { ...envs.gateway, RATE_LIMIT_BURST: '100000', RATE_LIMIT_TEAM_BURST: '100000' };
  for (const name of Object.keys(envs) as ServiceName[]) {
    envs[name] = { ...harness, ...envs[name], ...extra };
    for (const [k, v] of Object.entries(options.serviceEnv?.[name] ?? {})) {
      if (v !== undefined && v !== null) envs[name][k] = String(v);
    }
  }

  const all: ServiceHandle[] = [];
  const services: Partial<Record<ServiceName, ServiceHandle>> = {};
  let stopped: Promise<void> | null = null;
  const everything = START_ORDER.every((n) => wanted.has(n));
  const readyPath = (name: ServiceName) => options.readyPaths?.[name] ?? (name === 'gateway' && !everything ? '/healthz' : '/readyz');

  // Not inherited from the test process: a service without a database gets no DATABASE_URL.
  const unset = (name: ServiceName): EnvInput => (serviceInfo(name).schema === null && !('DATABASE_URL' in extra) ? { DATABASE_URL: null } : {});

  const start = async (name: ServiceName) => {
    const handle = await startService(name, { ...unset(name), ...envs[name] }, { readyPath: readyPath(name), readyTimeoutMs: options.readyTimeoutMs });
    all.push(handle);
    services[name] = handle;
  };

  const system: System = {
    gatewayUrl: `http://127.0.0.1:${ports.gateway.http}`,
    urls: Object.fromEntries(SERVICES.map((s) => [s.name, `http://127.0.0.1:${ports[s.name].http}`])) as Record<ServiceName, string>,
    metricsUrls: Object.fromEntries(SERVICES.map((s) => [s.name, `http://127.0.0.1:${ports[s.name].metrics}`])) as Record<ServiceName, string>,
    grpcAddrs: Object.fromEntries(GRPC_SERVICES.map((n) => [n, `127.0.0.1:${ports[n].grpc}`])) as System['grpcAddrs'],
    env: shared,
    serviceEnv: envs,
    services,
    all,
    databaseUrl: database.url,
    natsUrl,
    keys,
    database,
    async startService(name, env = {}, startOptions = {}) {
      const own: EnvInput = { ...shared, ...privateEnv(name, keys), ...unset(name), ...options.serviceEnv?.[name], ...env };
      if (serviceInfo(name).schema === null && own.DATABASE_URL === database.url) own.DATABASE_URL = null;
      const handle = await startService(name, own, { readyPath: readyPath(name), ...startOptions });
      all.push(handle);
      return handle;
    },
    stop() {
      stopped ??= (async () => {
        await stopServices();
        await database.drop();
      })();
      return stopped;
    },
  };
  const stopServices = async () => {
    for (const stage of stopStages(all, (h) => h.name)) await Promise.all(stage.map((h) => h.stop()));
  };

  try {
    // The first of the start order alone (token), the last alone (the gateway, which calls every
    // other), everything in between side by side.
    if (wanted.has(FIRST)) await start(FIRST);
    const middle = START_ORDER.filter((n) => n !== FIRST && n !== LAST && wanted.has(n));
    const results = await Promise.allSettled(middle.map((n) => start(n)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    if (wanted.has(LAST)) await start(LAST);
  } catch (err) {
    await stopServices().catch(() => undefined);
    throw err;
  }
  return system;
}
