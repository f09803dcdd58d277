import { readFileSync } from 'node:fs';
import path from 'node:path';
import { render, renderFailure } from '../src/helm.mjs';
import { SERVICES } from '../src/objects.mjs';
import { chartDir } from '../src/paths.mjs';
import { loadSchema, schemaAt, schemaPaths, valueEntries, valuesTable } from '../src/values-doc.mjs';

const minimal = { valuesFile: 'minimal-values.yaml' };

describe('values.schema.json', () => {
  test.each([
    ['an unknown top-level key', ['replicas=3'], "additional properties 'replicas' not allowed"],
    ['an unknown key of a service', ['gateway.replica=3'], '/gateway/replica'],
    ['a misspelt nested key', ['ingress.tsl[0].secretName=x'], "additional properties 'tsl' not allowed"],
    ['database settings on a service without a database', ['console.database.schema=console'], '/console/database'],
  ])('rejects %s', (_, set, message) => {
    expect(renderFailure({ ...minimal, set })).toContain(message);
  });

  test.each([
    ['a string where an integer belongs', ['token.replicaCount=three'], 'got string, want integer'],
    ['a string where a boolean belongs', ['ingress.enabled=sometimes'], 'got string, want boolean'],
    ['a number where a list belongs', ['webhookAllowedCidrs=5'], 'want array'],
    ['an unknown log level', ['logLevel=verbose'], '/logLevel'],
    ['a database URL of another scheme', ['database.url=mysql://db/worklane'], '/database/url'],
    ['a port out of range', ['networkPolicy.postgres.ports[0]=70000'], '/networkPolicy/postgres/ports/0'],
    ['a container without a memory limit', ['serviceDefaults.resources.limits=null'], '/serviceDefaults/resources'],
    ['an unknown Prometheus Operator mode', ['metrics.prometheusOperator=sometimes'], '/metrics/prometheusOperator'],
    ['a runbook base URL with a trailing slash', ['metrics.prometheusRule.runbookBaseUrl=https://example.com/'], '/metrics/prometheusRule/runbookBaseUrl'],
    ['a volume mount without a path', ['gateway.extraVolumeMounts[0].name=x'], '/gateway/extraVolumeMounts/0'],
  ])('rejects %s', (_, set, message) => {
    expect(renderFailure({ ...minimal, set })).toContain(message);
  });

  test('accepts the defaults plus a database URL', () => {
    expect(render(minimal).length).toBeGreaterThan(0);
  });

  test('describes exactly the keys values.yaml has (a service takes the keys of serviceDefaults; its own block is optional)', () => {
    const schema = loadSchema();
    const entries = valueEntries();
    expect(entries.filter((entry) => schemaAt(schema, entry.path) === undefined).map((e) => e.path)).toEqual([]);
    const paths = new Set(entries.map((entry) => entry.path));
    const service = (p) => SERVICES.find((name) => p === name || p.startsWith(`${name}.`));
    const asDefault = (p) => p.replace(/^[^.]+\./, 'serviceDefaults.');
    const described = (p) => paths.has(p) || (service(p) && (!paths.has(service(p)) || paths.has(asDefault(p))));
    expect(schemaPaths(schema).filter((p) => !described(p))).toEqual([]);
  });
});

describe('chart-level checks', () => {
  test('a service without a PostgreSQL URL fails with a message naming the settings', () => {
    expect(renderFailure({ set: [] })).toMatch(/(\w+) needs PostgreSQL: set database.url, database.existingSecret.name or \1.database.existingSecret.name/);
  });

  test('internet egress only for services of the catalog', () => {
    expect(renderFailure({ ...minimal, set: ['networkPolicy.internetEgress.components[0]=postgres'] })).toContain(
      'networkPolicy.internetEgress.components: "postgres" is not a Worklane service (gateway, token,',
    );
  });

  test('a grace period too short for the preStop sleep fails', () => {
    expect(renderFailure({ ...minimal, set: ['gateway.terminationGracePeriodSeconds=6'] })).toContain('gateway.terminationGracePeriodSeconds');
  });

  test('the drain after SIGTERM reaches every service and must fit in the grace period', () => {
    const configMaps = render({ ...minimal, set: ['shutdownDrainSeconds=7'] }).filter((object) => object.kind === 'ConfigMap' && object.data?.SHUTDOWN_TIMEOUT_MS);
    expect(configMaps.length).toBe(SERVICES.length);
    for (const configMap of configMaps) expect(configMap.data.SHUTDOWN_DRAIN_MS).toBe('7000');
    expect(renderFailure({ ...minimal, set: ['shutdownDrainSeconds=21'] })).toContain('shutdownDrainSeconds (21)');
  });

  test("a cluster older than the chart's kubeVersion is refused before anything is created", () => {
    expect(renderFailure({ ...minimal, kubeVersion: '1.29.9' })).toContain('chart requires kubeVersion: >=1.30.0-0');
    expect(render({ ...minimal, kubeVersion: '1.30.0' }).length).toBeGreaterThan(0);
  });

  test('an autoscaler whose minimum exceeds its maximum fails', () => {
    expect(renderFailure({ ...minimal, set: ['issue.autoscaling.enabled=true', 'issue.autoscaling.minReplicas=5', 'issue.autoscaling.maxReplicas=2'] })).toContain(
      'issue.autoscaling.minReplicas',
    );
  });
});

describe('values.yaml documentation', () => {
  test('every key is documented by a `# --` comment on itself or a parent', () => {
    const entries = valueEntries();
    const described = new Set(entries.filter((e) => e.description).map((e) => e.path));
    const undocumented = entries
      .filter((entry) => entry.leaf)
      .filter((entry) => !entry.path.split('.').some((_, i, parts) => described.has(parts.slice(0, i + 1).join('.'))))
      .map((entry) => entry.path);
    expect(undocumented).toEqual([]);
  });

  test('the values table in the chart README is generated from values.yaml (run `npm run docs` to refresh)', () => {
    const readme = readFileSync(path.join(chartDir, 'README.md'), 'utf8');
    expect(readme).toContain(valuesTable());
  });
});
