import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { SERVICES, START_ORDER } from '@worklane/config';

import { repoRoot } from './repo';
import { defaultPorts, serviceEnv } from './services';

const devServices = path.join(repoRoot(), 'tools', 'dev', 'src', 'services.mjs');

/** Evaluates `expression` with the dev runner's wiring (`loadWiring()` of tools/dev) as `m`, in a plain node. */
function fromDevRunner(expression: string, env: Record<string, string> = {}): unknown {
  const script = `import(${JSON.stringify(devServices)}).then((d) => d.loadWiring()).then((m) => process.stdout.write(JSON.stringify(${expression})))`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

const pair = (name: string) => ({ privateKey: `private ${name}`, publicKey: `public ${name}` });
const keys = {
  signing: { gateway: pair('gateway'), console: pair('console'), issue: pair('issue'), delivery: pair('delivery'), cli: pair('cli') },
  webhookSecretKey: 'w'.repeat(64),
};

describe('the service table', () => {
  it('is the one npm start runs (tools/dev loads it from this package)', () => {
    expect(fromDevRunner('{ services: m.SERVICES, order: m.START_ORDER }')).toEqual({
      services: SERVICES,
      order: START_ORDER,
    });
  });

  it('gives every service a metrics port of its own, distinct from every other port', () => {
    const all = Object.values(defaultPorts(8080))
      .flatMap((p) => [p.http, p.grpc, p.metrics])
      .filter((p) => p !== null);
    expect(new Set(all).size).toBe(all.length);
    expect(serviceEnv({ keys, env: {} }).delivery.METRICS_PORT).toBe('9185');
  });

  it("runs every service on the table's ports (those of docs/architecture.md), the gateway on GATEWAY_PORT", () => {
    const table = Object.fromEntries(SERVICES.map((s) => [s.name, { http: s.httpPort, grpc: s.grpcPort, metrics: s.metricsPort }]));
    expect(defaultPorts(18080)).toEqual({ ...table, gateway: { ...table.gateway, http: 18080 } });
    expect(defaultPorts(8080).token).toEqual({ http: 9101, grpc: 7001, metrics: 9181 });
  });
});

describe('serviceEnv', () => {
  const input = { databaseUrl: 'postgres://postgres@127.0.0.1:5999/postgres', natsUrl: 'nats://127.0.0.1:4999', gatewayPort: 18080, keys };
  const env = { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'debug' };

  it('wires the services as npm start does', () => {
    const expected = fromDevRunner(`m.serviceEnv(${JSON.stringify(input)})`, env);
    expect(serviceEnv({ ...input, env })).toEqual(expected);
  });

  it('gives each service its ports, schema and the addresses of the others', () => {
    const envs = serviceEnv({ ...input, env: {} });
    expect(envs.token).toMatchObject({
      HTTP_PORT: '9101',
      GRPC_PORT: '7001',
      DATABASE_URL: input.databaseUrl,
      DATABASE_SCHEMA: 'token',
      OTEL_SERVICE_NAME: 'token',
      GATEWAY_PUBLIC_KEY: 'public gateway',
      ISSUE_PUBLIC_KEY: 'public issue',
      CLI_PUBLIC_KEY: 'public cli',
    });
    expect(envs.token.SIGNING_PRIVATE_KEY).toBeUndefined();
    expect(envs.issue.SIGNING_PRIVATE_KEY).toBe('private issue');
    expect(envs.gateway.SIGNING_PRIVATE_KEY).toBe('private gateway');
    for (const env of Object.values(envs)) expect(Object.values(env)).not.toContain('private cli');
    expect(envs.gateway).toMatchObject({
      HTTP_PORT: '18080',
      TOKEN_SERVICE_ADDR: '127.0.0.1:7001',
      PROJECT_SERVICE_URL: 'http://127.0.0.1:8081',
      CONSOLE_SERVICE_URL: 'http://127.0.0.1:8085',
    });
    expect(envs.gateway.DATABASE_URL).toBeUndefined();
    expect(envs.gateway.GRPC_PORT).toBeUndefined();
    expect(envs.issue).toMatchObject({ NATS_URL: input.natsUrl, PROJECT_GRPC_ADDR: '127.0.0.1:7002', DATABASE_SCHEMA: 'issue' });
    expect(envs.delivery).toMatchObject({ WEBHOOK_GRPC_ADDR: '127.0.0.1:7003' });
    expect(envs.webhook).toMatchObject({ WEBHOOK_SECRET_KEY: keys.webhookSecretKey, GRPC_PORT: '7003' });
    expect(envs.webhook.WEBHOOK_ALLOWED_CIDRS).toBeUndefined();
    expect(serviceEnv({ ...input, env: { WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8' } }).delivery.WEBHOOK_ALLOWED_CIDRS).toBe('10.0.0.0/8');
  });
});
