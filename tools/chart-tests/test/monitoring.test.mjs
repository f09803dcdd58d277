import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { deliveryOutcomes } from '../src/delivery-outcomes.mjs';
import { render } from '../src/helm.mjs';
import { SERVICES, byComponent, ofKind } from '../src/objects.mjs';
import { repoRoot } from '../src/paths.mjs';

// The metric names the services expose (packages/observability); alerts and dashboard use only these.
const METRICS = [
  'worklane_http_requests_total',
  'worklane_http_request_duration_seconds_bucket',
  'worklane_grpc_requests_total',
  'worklane_webhook_deliveries_total',
  'worklane_webhook_attempt_duration_seconds_bucket',
  'worklane_webhook_delivery_lag_seconds_bucket',
  'worklane_outbox_backlog',
  'worklane_delivery_consumer_pending',
  'worklane_webhook_retries_scheduled_total',
  'worklane_outbox_dead_lettered_total',
  'worklane_stream_bytes',
  'worklane_stream_max_bytes',
  'worklane_stream_messages',
  'worklane_stream_max_messages',
  'worklane_stream_oldest_age_seconds',
  'worklane_stream_max_age_seconds',
  'worklane_delivery_retention_removed_total',
];
const metricsIn = (text) => [...new Set(text.match(/worklane_[a-z_]+/g) ?? [])];
const monitoringKinds = (objects) => objects.filter((o) => ['ServiceMonitor', 'PrometheusRule'].includes(o.kind)).map((o) => o.kind);

const objects = render({ valuesFile: 'all-enabled-values.yaml', namespace: 'wl-prod' });
const [rule] = ofKind(objects, 'PrometheusRule');
const alerts = rule.spec.groups.flatMap((group) => group.rules);
const dashboardMap = ofKind(objects, 'ConfigMap').find((cm) => cm.metadata.labels.grafana_dashboard === '1');

test('the PrometheusRule alerts on gateway 5xx ratio and latency, delivery failures and lag, and the outbox backlog', () => {
  expect(alerts.map((alert) => alert.alert)).toEqual(
    expect.arrayContaining([
      'WorklaneGatewayHighErrorRatio',
      'WorklaneGatewayHighLatency',
      'WorklaneDeliveryFailureRatioHigh',
      'WorklaneDeliveryLagHigh',
      'WorklaneOutboxBacklog',
      'WorklaneOutboxDeadLettered',
      'WorklaneEventStreamNearlyFull',
      'WorklaneServiceDown',
      'WorklaneServiceAbsent',
    ]),
  );
  for (const alert of alerts) {
    expect(alert.labels.severity).toMatch(/^(critical|warning)$/);
    expect(alert.annotations.summary).toBeTruthy();
    expect(alert.for).toMatch(/^[0-9]+m$/);
    // Scoped to the release's namespace so two installations never alert on each other.
    for (const selector of alert.expr.match(/(worklane_[a-z_]+|up)\{[^}]*\}/g)) expect(selector).toContain('namespace="wl-prod"');
  }
});

test('every alert links its runbook in docs/runbooks, and every runbook belongs to an alert', () => {
  const base = 'https://github.com/worklane/worklane/blob/main/docs/runbooks';
  for (const alert of alerts) {
    expect(alert.annotations.runbook_url).toBe(`${base}/${alert.alert}.md`);
    expect(existsSync(path.join(repoRoot, 'docs/runbooks', `${alert.alert}.md`))).toBe(true);
  }
  const runbooks = readdirSync(path.join(repoRoot, 'docs/runbooks')).filter((f) => /^Worklane\w+\.md$/.test(f));
  expect(runbooks.map((f) => f.replace(/\.md$/, '')).sort()).toEqual(alerts.map((a) => a.alert).sort());
  const moved = render({ valuesFile: 'all-enabled-values.yaml', set: ['metrics.prometheusRule.runbookBaseUrl=https://wiki.example.com/worklane'] });
  const [movedRule] = ofKind(moved, 'PrometheusRule');
  expect(movedRule.spec.groups[0].rules[0].annotations.runbook_url).toMatch(/^https:\/\/wiki\.example\.com\/worklane\/Worklane\w+\.md$/);
});

test('the service-down alerts watch the scrape job of every Service the ServiceMonitors scrape', () => {
  const jobs = ofKind(objects, 'ServiceMonitor').map((monitor) => objects.find((o) => o.kind === 'Service' && o.metadata.name === monitor.metadata.name).metadata.name);
  expect(jobs).toHaveLength(SERVICES.length);
  const down = alerts.find((a) => a.alert === 'WorklaneServiceDown');
  const [, pattern] = down.expr.match(/job=~"([^"]+)"/);
  expect(pattern.split('|').sort()).toEqual([...jobs].sort());
  expect(down.expr).toMatch(/^sum by \(namespace, job\) \(up\{.*\}\) == 0\s*$/);
  const absent = alerts.find((a) => a.alert === 'WorklaneServiceAbsent');
  expect([...absent.expr.matchAll(/absent\(up\{namespace="wl-prod",job="([^"]+)"\}\)/g)].map((m) => m[1]).sort()).toEqual([...jobs].sort());
});

test('the delivery-failure alert selects outcome values the delivery service really emits (read from its code)', () => {
  const { declared, emitted, calls } = deliveryOutcomes();
  expect(calls.length).toBeGreaterThan(0);
  // Every call site passes string literals (a plain string would show as <string>).
  expect(emitted.filter((value) => value.startsWith('<'))).toEqual([]);
  const alert = alerts.find((a) => a.alert === 'WorklaneDeliveryFailureRatioHigh');
  const [numerator, denominator] = alert.expr.split(/\n\s*\/\n/);
  const failed = [...numerator.matchAll(/outcome="([^"]+)"/g)].map((m) => m[1]);
  const finished = denominator.match(/outcome=~"([^"]+)"/)[1].split('|');
  expect(failed).toEqual(['exhausted']);
  for (const value of [...failed, ...finished]) {
    expect({ value, emitted: emitted.includes(value), declared: declared.includes(value) }).toEqual({ value, emitted: true, declared: true });
  }
  // The failures are part of the finished deliveries they are a fraction of.
  expect(finished).toEqual(expect.arrayContaining(failed));
});

test('alerts and the dashboard use only metric names the services expose', () => {
  const used = [...metricsIn(alerts.map((a) => a.expr).join('\n')), ...metricsIn(dashboardMap.data['worklane.json'])];
  expect(used.filter((name) => !METRICS.includes(name))).toEqual([]);
  expect(METRICS.filter((name) => !used.includes(name))).toEqual([]);
});

test('the dashboard is valid Grafana JSON with RED and delivery-pipeline panels', () => {
  const dashboard = JSON.parse(dashboardMap.data['worklane.json']);
  expect(dashboard.uid).toBe('worklane-overview');
  const titles = dashboard.panels.map((panel) => panel.title);
  expect(titles).toEqual(expect.arrayContaining(['Requests per second', '5xx ratio', 'Latency p99', 'Outbox backlog (unpublished events)', 'Event-to-delivery lag']));
  const ids = dashboard.panels.map((panel) => panel.id);
  expect(new Set(ids).size).toBe(ids.length);
});

test("a ServiceMonitor scrapes /metrics on the metrics port of every service, keeping the metrics' own service label", () => {
  const monitors = ofKind(objects, 'ServiceMonitor');
  expect(monitors).toHaveLength(SERVICES.length);
  for (const monitor of monitors) {
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics', honorLabels: true })]);
  }
});

test('every service serves metrics on a metrics port of its own: container port, Service port and METRICS_PORT agree', () => {
  for (const name of SERVICES) {
    const deployment = byComponent(objects, 'Deployment', name);
    const container = deployment.spec.template.spec.containers.find((c) => c.name === name);
    expect(container.ports).toContainEqual({ name: 'metrics', containerPort: 9464, protocol: 'TCP' });
    const http = container.ports.find((p) => p.name === 'http');
    expect(http.containerPort).not.toBe(9464);
    const service = byComponent(objects, 'Service', name);
    expect(service.spec.ports).toContainEqual(expect.objectContaining({ name: 'metrics', port: 9464, targetPort: 'metrics' }));
    const config = byComponent(objects, 'ConfigMap', name);
    expect(config.data.METRICS_PORT).toBe('9464');
  }
  const moved = render({ valuesFile: 'all-enabled-values.yaml', set: ['metrics.port=9999'] });
  expect(byComponent(moved, 'ConfigMap', 'issue').data.METRICS_PORT).toBe('9999');
});

test('monitoring objects are not rendered unless enabled', () => {
  const minimal = render({ valuesFile: 'minimal-values.yaml' });
  expect(minimal.filter((o) => ['ServiceMonitor', 'PrometheusRule'].includes(o.kind))).toEqual([]);
  expect(ofKind(minimal, 'ConfigMap').filter((cm) => cm.metadata.labels.grafana_dashboard)).toEqual([]);
});

test('Prometheus Operator objects render only where the API server serves their kind, or when metrics.prometheusOperator says always', () => {
  const withoutCrds = render({ valuesFile: 'all-enabled-values.yaml', apiVersions: [] });
  expect(monitoringKinds(withoutCrds)).toEqual([]);
  // The rest of the release is unchanged, the dashboard included (a plain ConfigMap).
  expect(withoutCrds.length).toBe(objects.length - SERVICES.length - 1);
  const rulesOnly = render({ valuesFile: 'all-enabled-values.yaml', apiVersions: ['monitoring.coreos.com/v1/PrometheusRule'] });
  expect(monitoringKinds(rulesOnly)).toEqual(['PrometheusRule']);
  const forced = render({ valuesFile: 'all-enabled-values.yaml', apiVersions: [], set: ['metrics.prometheusOperator=always'] });
  expect(monitoringKinds(forced).sort()).toEqual([...Array(SERVICES.length).fill('ServiceMonitor'), 'PrometheusRule'].sort());
});
