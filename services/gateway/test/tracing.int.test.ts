// One API call is one trace: the gateway's server span, its gRPC call to the token service (client
// and server side), the proxied HTTP call to the project service (client and server side) and the
// SQL each service ran. The services run in one child process (trace-harness.cjs) whose tracer
// exports to memory, because jest's module loader bypasses the instrumentations' require hooks.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@worklane/testing';

jest.setTimeout(120_000);

interface SpanRecord {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  scope: string;
  attributes: Record<string, unknown>;
}

interface HarnessOutput {
  status: number;
  apiPath: string;
  ports: { gateway: number; project: number; token: number };
  spans: SpanRecord[];
}

const SERVER = 1;
const CLIENT = 2;

function runHarness(databaseUrl: string): Promise<HarnessOutput> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
    delete env.JEST_WORKER_ID;
    const child = spawn(process.execPath, [join(__dirname, 'trace-harness.cjs')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`trace harness exited with ${code}:\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()!) as HarnessOutput);
    });
  });
}

let database: TestDatabase;
let output: HarnessOutput;

beforeAll(async () => {
  database = await createTestDatabase();
  output = await runHarness(database.url);
});

afterAll(async () => {
  await database?.drop();
});

const scoped = (scope: string) => (span: SpanRecord) => span.scope === `@opentelemetry/instrumentation-${scope}`;
const port = (span: SpanRecord) => Number(span.attributes['server.port'] ?? span.attributes['net.peer.port']);

function only(description: string, predicate: (span: SpanRecord) => boolean): SpanRecord {
  const found = output.spans.filter(predicate);
  if (found.length !== 1) throw new Error(`expected one ${description} span, found ${found.length}: ${JSON.stringify(output.spans.map((span) => span.name))}`);
  return found[0]!;
}

function isDescendant(span: SpanRecord, ancestor: SpanRecord): boolean {
  const byId = new Map(output.spans.map((candidate) => [candidate.spanId, candidate]));
  let current: SpanRecord | undefined = span;
  for (let depth = 0; current && depth < 50; depth++) {
    if (current.parentSpanId === ancestor.spanId) return true;
    current = current.parentSpanId ? byId.get(current.parentSpanId) : undefined;
  }
  return false;
}

it('answers the API call', () => {
  expect(output.status).toBe(200);
});

it('covers gateway, token service, project service and their SQL with one trace id', () => {
  // The harness's own fetch starts the trace; the gateway's server span is its child. (Server spans
  // carry the Host header's port, which the proxy keeps, so ports do not tell servers apart.)
  const caller = only('harness fetch', (span) => scoped('undici')(span) && span.parentSpanId === null);
  const gatewayServer = only('gateway HTTP server', (span) => scoped('http')(span) && span.kind === SERVER && span.parentSpanId === caller.spanId);
  const authenticateClient = only('Authenticate gRPC client', (span) => scoped('grpc')(span) && span.kind === CLIENT && span.name.endsWith('TokenService/Authenticate'));
  const authenticateServer = only('Authenticate gRPC server', (span) => scoped('grpc')(span) && span.kind === SERVER && span.name.endsWith('TokenService/Authenticate'));
  const proxiedClient = only('proxied HTTP client', (span) => scoped('http')(span) && span.kind === CLIENT && port(span) === output.ports.project);
  const projectServer = only('project HTTP server', (span) => scoped('http')(span) && span.kind === SERVER && span.parentSpanId === proxiedClient.spanId);
  const tokenQuery = only(
    'token lookup query',
    (span) => scoped('pg')(span) && span.name.startsWith('pg.query') && isDescendant(span, authenticateServer) && span.name.includes('token_by_hash'),
  );
  const projectQueries = output.spans.filter((span) => scoped('pg')(span) && span.name.startsWith('pg.query') && isDescendant(span, projectServer));

  expect(projectQueries.length).toBeGreaterThan(0);
  const traceIds = new Set(
    [caller, gatewayServer, authenticateClient, authenticateServer, proxiedClient, projectServer, tokenQuery, ...projectQueries].map((span) => span.traceId),
  );
  expect(traceIds.size).toBe(1);

  // The parent links follow the request: gateway -> token over gRPC, gateway -> project over HTTP.
  expect(isDescendant(authenticateClient, gatewayServer)).toBe(true);
  expect(authenticateServer.parentSpanId).toBe(authenticateClient.spanId);
  expect(isDescendant(proxiedClient, gatewayServer)).toBe(true);
  expect(projectServer.attributes['http.route']).toBe('/api/v1/teams/:team/organizations/:organization/projects');
});

it('marks the server spans of the gateway and of the service with the request id', () => {
  const servers = output.spans.filter((span) => scoped('http')(span) && span.kind === SERVER);
  expect(servers.length).toBe(2);
  for (const span of servers) expect(span.attributes['worklane.request_id']).toBe('trace-harness-request-1');
});

it('puts no token value or identity signature into span attributes', () => {
  const text = JSON.stringify(output.spans);
  expect(text).not.toMatch(/wl_[0-9A-Za-z]{36}/);
  expect(text).not.toMatch(/x-worklane-signature/i);
});
