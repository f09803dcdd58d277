// Runs the gateway, token and project services in this one process with an in-memory span
// exporter, makes one API call through the gateway and prints its trace as one JSON line.
// One process, because jest's module loader bypasses the require hooks that instrument
// express, http, grpc-js and pg. Used by tracing.int.test.ts; needs DATABASE_URL.
'use strict';
const path = require('node:path');
// eslint-disable-next-line import-x/order -- tracing starts before the modules it instruments load
const { startTracing, createLogger, createMetrics } = require('@worklane/observability');
// The SDK version @worklane/observability runs on, wherever npm placed it.
const observabilityDir = path.dirname(require.resolve('@worklane/observability/package.json'));
const { InMemorySpanExporter } = require(require.resolve('@opentelemetry/sdk-trace', { paths: [observabilityDir] }));

const exporter = new InMemorySpanExporter();
// Before anything it instruments is loaded.
const tracing = startTracing({ serviceName: 'trace-harness', exporter });

const { createPool, migrate } = require('@worklane/db');
const { createGrpcClient, unaryCall } = require('@worklane/grpc');
const { listen } = require('@worklane/http');
const { loadProto } = require('@worklane/proto');

const root = path.join(__dirname, '..', '..', '..');
const service = (name, file) => require(path.join(root, 'services', name, 'dist', file));
const token = service('token', 'app.js');
const project = service('project', 'app.js');
const gateway = service('gateway', 'app.js');
const { TokenAuthenticator } = service('gateway', 'authenticate.js');
const { createAgents } = service('gateway', 'proxy.js');
const { RateLimiter } = service('gateway', 'rate-limit.js');

const { publicKeysOf, signerOf, signingKeyPairs } = require('@worklane/testing');

// Each principal with its own key pair, as in a real system.
const keys = signingKeyPairs();
const signer = (name) => signerOf(keys, name);
const quiet = (name) => createLogger(name, 'silent');

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL is required');
  await migrate(databaseUrl, 'token', path.join(root, 'services', 'token', 'migrations'));
  await migrate(databaseUrl, 'project', path.join(root, 'services', 'project', 'migrations'));
  const tokenPool = createPool({ url: databaseUrl, schema: 'token', max: 4, applicationName: 'token' });
  const projectPool = createPool({ url: databaseUrl, schema: 'project', max: 4, applicationName: 'project' });

  const tokenApp = token.createApp({
    pool: tokenPool,
    logger: quiet('token'),
    metrics: createMetrics('token'),
    publicKeys: publicKeysOf(keys, ['gateway', 'console', 'issue', 'cli']),
    sessionLifetime: { idleSeconds: 3600, absoluteSeconds: 7200 },
    isReady: () => true,
  });
  const tokenAddr = `127.0.0.1:${await tokenApp.grpc.listen('127.0.0.1', 0)}`;
  const projectApp = project.createApp({
    pool: projectPool,
    logger: quiet('project'),
    metrics: createMetrics('project'),
    publicKeys: publicKeysOf(keys, ['gateway', 'console', 'issue', 'cli']),
    isReady: () => true,
  });
  const projectGrpcAddr = `127.0.0.1:${await projectApp.grpc.listen('127.0.0.1', 0)}`;
  const projectServer = await listen(projectApp.http, 0, '127.0.0.1');

  const { TokenService, AccountService } = loadProto('token').worklane.token.v1;
  const { ProjectDirectory } = loadProto('project').worklane.project.v1;
  // The setup calls are the operator CLI's; the gateway only authenticates.
  const signing = { caller: 'cli', signingKey: signer('cli').key };
  const tokens = createGrpcClient(TokenService, tokenAddr, { caller: 'gateway', signingKey: signer('gateway').key });
  const cliTokens = createGrpcClient(TokenService, tokenAddr, signing);
  const accounts = createGrpcClient(AccountService, tokenAddr, signing);
  const directory = createGrpcClient(ProjectDirectory, projectGrpcAddr, signing);
  const call = (client, method, request) => unaryCall((metadata, options, done) => client[method](request, metadata, options, done));

  const agents = createAgents(4_000);
  const gatewayApp = gateway.createApp({
    logger: quiet('gateway'),
    metrics: createMetrics('gateway'),
    identitySigner: signer('gateway'),
    authenticator: new TokenAuthenticator(tokens, 5_000, quiet('gateway')),
    rateLimiter: new RateLimiter(0, 1),
    teamRateLimiter: new RateLimiter(0, 1),
    upstreams: { project: `http://127.0.0.1:${projectServer.address().port}` },
    agents,
    upstreamTimeoutMs: 10_000,
    isReady: () => true,
  });
  const gatewayServer = await listen(gatewayApp, 0, '127.0.0.1');

  const user = await call(accounts, 'CreateUser', { email: `trace-${Date.now()}@example.test`, password: 'trace-password', name: '' });
  const team = await call(accounts, 'CreateTeam', { name: 'Traced', owner_user_id: user.id });
  const organization = await call(directory, 'CreateOrganization', { team_id: team.id, name: 'Traced Org' });
  const created = await call(cliTokens, 'CreateToken', { team_id: team.id, user_id: user.id, name: 'trace' });

  // Only the API call's spans from here on.
  exporter.reset();
  const apiPath = `/api/v1/teams/${team.id}/organizations/${organization.id}/projects`;
  const response = await fetch(`http://127.0.0.1:${gatewayServer.address().port}${apiPath}`, {
    headers: { authorization: `Bearer ${created.value}`, accept: 'application/json', 'x-request-id': 'trace-harness-request-1' },
  });
  const status = response.status;
  await response.text();
  // The gateway's server span ends just after the client has the response; wait for it (bounded).
  const gatewayServerSpanEnded = () => {
    const finished = exporter.getFinishedSpans();
    const caller = finished.find((span) => span.instrumentationScope.name.endsWith('undici') && !span.parentSpanContext);
    return caller !== undefined && finished.some((span) => span.parentSpanContext?.spanId === caller.spanContext().spanId);
  };
  for (let attempt = 0; attempt < 100 && !gatewayServerSpanEnded(); attempt++) await new Promise((resolve) => setTimeout(resolve, 20));

  const spans = exporter.getFinishedSpans().map((span) => ({
    name: span.name,
    kind: span.kind,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    scope: span.instrumentationScope.name,
    attributes: span.attributes,
  }));
  process.stdout.write(
    `${JSON.stringify({ status, apiPath, ports: { gateway: gatewayServer.address().port, project: projectServer.address().port, token: Number(tokenAddr.split(':')[1]) }, spans })}\n`,
  );

  for (const client of [tokens, cliTokens, accounts, directory]) client.close();
  agents.destroy();
  gatewayServer.close();
  projectServer.close();
  await Promise.all([tokenApp.grpc.shutdown(), projectApp.grpc.shutdown()]);
  await Promise.all([tokenPool.end(), projectPool.end()]);
  await tracing.shutdown();
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
    process.exit(1);
  },
);
