// The service table (@worklane/config's service-table.ts) against everything else that describes
// the services: their folders, their own configuration defaults (src/config.ts), the files
// generated from it (./generate.ts) and the rendered Helm chart. A disagreement fails here, naming
// the service and what differs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { METRICS_PORTS, PRINCIPALS, SERVICES, START_ORDER, serviceUrlEnv, startOrder, stopStages, type ServiceInfo, type ServiceName } from '@worklane/config';

import { GENERATED_FILES, VALUES_SCHEMA, updatedValuesSchema } from './generate';
import { findExecutable, repoRoot } from './repo';
import { configOf } from './service-config';

const root = repoRoot();
const names = SERVICES.map((s) => s.name);
const info = (name: ServiceName) => SERVICES.find((s) => s.name === name)!;

describe('the service table', () => {
  it('has one entry per folder of services/, each the package it names', () => {
    const folders = fs.readdirSync(path.join(root, 'services')).filter((dir) => fs.existsSync(path.join(root, 'services', dir, 'package.json')));
    expect([...names].sort()).toEqual(folders.sort());
    for (const service of SERVICES) {
      const pkg = JSON.parse(fs.readFileSync(path.join(root, 'services', service.name, 'package.json'), 'utf8'));
      expect({ service: service.name, package: pkg.name }).toEqual({ service: service.name, package: service.package });
    }
  });

  it('gives every port once', () => {
    const ports = SERVICES.flatMap((s) => [s.httpPort, s.grpcPort, s.metricsPort]).filter((p) => p !== null);
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('names only services it holds as callees, and a gRPC address only for gRPC servers', () => {
    for (const service of SERVICES) {
      for (const callee of [...service.calls.http, ...service.calls.grpc]) expect(names).toContain(callee);
      for (const callee of service.calls.grpc) expect(info(callee).grpcAddrEnv).not.toBeNull();
      expect(service.grpcAddrEnv === null).toBe(service.grpcPort === null);
    }
  });

  it('derives what each service depends on: PostgreSQL, NATS and the services it calls', () => {
    expect(info('issue').dependsOn).toEqual(['postgres', 'nats', 'project', 'token']);
    expect(info('console').dependsOn).toEqual(['token', 'project', 'webhook', 'issue', 'delivery']);
    expect(info('token').dependsOn).toEqual(['postgres']);
  });

  it('starts every service after the services it calls: token first (everyone authenticates through it)', () => {
    expect(START_ORDER[0]).toBe('token');
    expect([...START_ORDER].sort()).toEqual([...names].sort());
    for (const service of SERVICES) {
      for (const callee of [...service.calls.http, ...service.calls.grpc]) {
        expect(START_ORDER.indexOf(callee)).toBeLessThan(START_ORDER.indexOf(service.name));
      }
    }
  });

  it('stops every service after each service that calls it: the gateway first, the token service last', () => {
    const stages = stopStages(START_ORDER, (name) => name);
    expect(stages.flat().sort()).toEqual([...names].sort());
    expect(stages[0]).toEqual(['gateway']);
    expect(stages.at(-1)).toContain('token');
    const stageOf = (name: string) => stages.findIndex((stage) => stage.includes(name as ServiceName));
    for (const service of SERVICES) {
      for (const callee of [...service.calls.http, ...service.calls.grpc]) expect(stageOf(callee)).toBeGreaterThan(stageOf(service.name));
    }
    // The delivery service drains its fan-out while the webhook service still answers it.
    expect(stageOf('webhook')).toBeGreaterThan(stageOf('delivery'));
    // Two handles on one service stop in the same stage; a service none of the others calls stops
    // with the first, and a stage with nothing to stop is left out.
    expect(stopStages([{ name: 'webhook' }, { name: 'delivery' }, { name: 'token' }, { name: 'delivery' }], (h) => h.name)).toEqual([
      [{ name: 'delivery' }, { name: 'token' }, { name: 'delivery' }],
      [{ name: 'webhook' }],
    ]);
  });

  it('refuses calls that form a cycle, which no start order satisfies', () => {
    const cyclic = SERVICES.map((s) => (s.name === 'token' ? { ...s, dependsOn: [...s.dependsOn, 'gateway' as const] } : s));
    expect(() => startOrder(cyclic)).toThrow(/cycle/);
  });

  it.each(GENERATED_FILES.map(({ file }) => file))('is what %s is generated from (npm run generate -w @worklane/testing rewrites it)', (file) => {
    const generated = GENERATED_FILES.find((entry) => entry.file === file)!;
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    expect(text).toBe(generated.update(text));
  });

  it("gives a service without its own property in the chart's values schema the shared definition of its kind, and keeps the others", () => {
    const text = fs.readFileSync(path.join(root, VALUES_SCHEMA), 'utf8');
    const schema = JSON.parse(text) as { properties: Record<string, unknown> };
    const issueProperty = schema.properties.issue;
    delete schema.properties.project;
    delete schema.properties.console;
    const updated = JSON.parse(updatedValuesSchema(JSON.stringify(schema, null, 2))) as typeof schema;
    expect(updated.properties.project).toEqual({ $ref: '#/$defs/databaseService' });
    expect(updated.properties.console).toEqual({ $ref: '#/$defs/statelessService' });
    expect(updated.properties.issue).toEqual(issueProperty);
  });

  it("has the metrics ports that @worklane/config gives the services' METRICS_PORT", () => {
    expect(Object.fromEntries(SERVICES.map((s) => [s.name, s.metricsPort]))).toEqual(METRICS_PORTS);
  });
});

describe("each service's own configuration (src/config.ts)", () => {
  it.each(names)('%s: defaults to the ports and schema of the table', (name) => {
    const service = info(name);
    const config = configOf(name);
    expect({
      HTTP_PORT: config.HTTP_PORT?.default,
      GRPC_PORT: config.GRPC_PORT?.default ?? null,
      METRICS_PORT: config.METRICS_PORT?.default,
      DATABASE_SCHEMA: config.DATABASE_SCHEMA?.default ?? null,
      NATS_URL: 'NATS_URL' in config,
    }).toEqual({
      HTTP_PORT: service.httpPort,
      GRPC_PORT: service.grpcPort,
      METRICS_PORT: service.metricsPort,
      DATABASE_SCHEMA: service.schema,
      NATS_URL: service.nats,
    });
  });

  it('signs with its own key exactly when it is a signing principal (PRINCIPALS: the signing services and the CLI)', () => {
    const signers = SERVICES.filter((s) => 'SIGNING_PRIVATE_KEY' in configOf(s.name)).map((s) => s.name);
    expect([...PRINCIPALS].sort()).toEqual([...signers, 'cli'].sort());
  });

  it.each(names)('%s: reads the address of exactly the services it calls', (name) => {
    const service = info(name);
    const config = configOf(name);
    const urls = Object.keys(config).filter((key) => /^[A-Z]+_SERVICE_URL$/.test(key));
    const grpcAddrs = SERVICES.flatMap((s) => (s.grpcAddrEnv !== null && s.grpcAddrEnv in config ? [s.name] : []));
    expect({ http: urls.sort(), grpc: grpcAddrs.sort() }).toEqual({
      http: service.calls.http.map(serviceUrlEnv).sort(),
      grpc: [...service.calls.grpc].sort(),
    });
  });
});

// ---------------------------------------------------------------------------------------------
// The Helm chart
// ---------------------------------------------------------------------------------------------

interface K8sObject {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: any;
}

const chartDir = path.join(root, 'charts', 'worklane');

/** Renders charts/worklane with its default values (and a database URL, which it requires). */
function renderChart(): K8sObject[] {
  const helm = findExecutable('helm', process.env.HELM_BIN ?? process.env.WORKLANE_HELM_BIN);
  if (!helm) throw new Error('helm not found: run through `npm test`, which provisions it, or set HELM_BIN');
  // helm cannot ask a cluster its version: render for the oldest the chart supports.
  const kubeVersion = /kubeVersion:\s*"?>=\s*(\d+\.\d+\.\d+)/.exec(fs.readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8'))?.[1];
  const args = ['template', 'check', chartDir, '--namespace', 'worklane', '--set', 'database.url=postgres://check@postgres:5432/worklane'];
  if (kubeVersion) args.push('--kube-version', kubeVersion);
  const result = spawnSync(helm, args, {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HELM_CACHE_HOME: path.join(root, '.cache', 'helm'), HELM_CONFIG_HOME: path.join(root, '.cache', 'helm-config') },
  });
  if (result.status !== 0) throw new Error(`helm template failed (${result.status}):\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => Boolean(object && typeof object === 'object'));
}

describe('the Helm chart (charts/worklane)', () => {
  let objects: K8sObject[] = [];
  let schema: Record<string, any> = {};
  beforeAll(() => {
    objects = renderChart();
    schema = JSON.parse(fs.readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8'));
  });

  const component = (object: K8sObject) => object.metadata.labels?.['app.kubernetes.io/component'];
  const find = (kind: string, name: ServiceName) => {
    const found = objects.find((object) => object.kind === kind && component(object) === name);
    if (!found) throw new Error(`the chart renders no ${kind} for ${name}`);
    return found;
  };
  const portsOf = (ports: { name: string; containerPort?: number; port?: number }[]) =>
    Object.fromEntries(ports.filter((p) => p.name !== 'metrics').map((p) => [p.name, p.containerPort ?? p.port]));
  const expectedPorts = (service: ServiceInfo) => ({ http: service.httpPort, ...(service.grpcPort !== null ? { grpc: service.grpcPort } : {}) });

  it('runs one Deployment per service of the table, and no other', () => {
    const deployed = objects.filter((object) => object.kind === 'Deployment').map(component);
    expect(deployed.sort()).toEqual([...names].sort());
  });

  it.each(names)("%s: the table's image and ports in the Deployment and the Service", (name) => {
    const service = info(name);
    const container = find('Deployment', name).spec.template.spec.containers.find((c: { name: string }) => c.name === name);
    expect(container.image).toMatch(new RegExp(`/${service.image}[:@]`));
    expect(portsOf(container.ports)).toEqual(expectedPorts(service));
    expect(portsOf(find('Service', name).spec.ports)).toEqual(expectedPorts(service));
  });

  it.each(names)('%s: the environment the table implies (ports, schema, NATS, the addresses of its callees)', (name) => {
    const service = info(name);
    const data = find('ConfigMap', name).data ?? {};
    const urls = Object.keys(data).filter((key) => /^[A-Z]+_SERVICE_URL$/.test(key));
    const grpcAddrs = SERVICES.flatMap((s) => (s.grpcAddrEnv !== null && s.grpcAddrEnv in data ? [s.name] : []));
    expect({
      HTTP_PORT: data.HTTP_PORT,
      GRPC_PORT: data.GRPC_PORT ?? null,
      DATABASE_SCHEMA: data.DATABASE_SCHEMA ?? null,
      NATS_URL: 'NATS_URL' in data,
      urls: urls.sort(),
      grpc: grpcAddrs.sort(),
    }).toEqual({
      HTTP_PORT: String(service.httpPort),
      GRPC_PORT: service.grpcPort === null ? null : String(service.grpcPort),
      DATABASE_SCHEMA: service.schema,
      NATS_URL: service.nats,
      urls: service.calls.http.map(serviceUrlEnv).sort(),
      grpc: [...service.calls.grpc].sort(),
    });
    // What the table says it always gets (the chart's ingress is off by default).
    for (const [key, value] of Object.entries(service.env)) expect({ [key]: data[key] }).toEqual({ [key]: value });
  });

  it('finds each gRPC server at its Service and port through the variable the table names', () => {
    for (const caller of SERVICES) {
      const data = find('ConfigMap', caller.name).data ?? {};
      for (const callee of caller.calls.grpc) {
        expect(data[info(callee).grpcAddrEnv!]).toBe(`${find('Service', callee).metadata.name}:${info(callee).grpcPort}`);
      }
      for (const callee of caller.calls.http) {
        expect(data[serviceUrlEnv(callee)]).toBe(`http://${find('Service', callee).metadata.name}:${info(callee).httpPort}`);
      }
    }
  });

  it('migrates exactly the services with a schema, each in its own image', () => {
    const jobs = objects.filter((object) => object.kind === 'Job' && object.metadata.labels?.['worklane.dev/service']);
    const migrated = jobs.map((job) => job.metadata.labels!['worklane.dev/service']);
    expect(migrated.sort()).toEqual(
      SERVICES.filter((s) => s.schema !== null)
        .map((s) => s.name)
        .sort(),
    );
    for (const job of jobs) {
      const service = info(job.metadata.labels!['worklane.dev/service'] as ServiceName);
      expect(job.spec.template.spec.containers[0].image).toMatch(new RegExp(`/${service.image}[:@]`));
    }
  });

  // A service's own block in values.yaml is optional (it takes serviceDefaults); the schema must
  // still accept one, or nothing about the service could be tuned.
  it('lets every service be tuned by a block of its own (values.schema.json), with database settings exactly for those with a schema', () => {
    const kinds = Object.fromEntries(SERVICES.map((s) => [s.name, (schema.properties[s.name]?.$ref as string | undefined)?.replace('#/$defs/', '') ?? 'missing']));
    expect(kinds).toEqual(Object.fromEntries(SERVICES.map((s) => [s.name, s.schema !== null ? expect.stringMatching(/^databaseService/) : 'statelessService'])));
  });

  it('names the signing principals the code gives, where the schema lists them', () => {
    const signing = schema.properties.secrets.properties.signingKeys.properties.existingSecrets.propertyNames.enum;
    expect([...signing].sort()).toEqual([...PRINCIPALS].sort());
  });

  it('exposes exactly the public services to the ingress', () => {
    const ingressOpen = (name: ServiceName) => {
      const policy = find('NetworkPolicy', name);
      return JSON.stringify(policy.spec.ingress ?? []).includes('ingress-nginx');
    };
    for (const service of SERVICES) expect({ service: service.name, public: ingressOpen(service.name) }).toEqual({ service: service.name, public: service.public });
  });
});
