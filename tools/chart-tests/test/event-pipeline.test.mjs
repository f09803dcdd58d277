import { render, renderCi, renderFailure } from '../src/helm.mjs';
import { byComponent, ofKind } from '../src/objects.mjs';

// The ISSUE_EVENTS stream's limits, the dead-letter and delivery retention settings, and their alerts.
const minimal = { valuesFile: 'minimal-values.yaml' };
const configOf = (objects, name) => byComponent(objects, 'ConfigMap', name).data;

test('the issue and delivery services get the same stream limits: 3 replicas, 1 GiB, discard new by default', () => {
  const objects = render(minimal);
  for (const name of ['issue', 'delivery']) {
    expect(configOf(objects, name)).toMatchObject({
      ISSUE_EVENTS_REPLICAS: '3',
      ISSUE_EVENTS_MAX_BYTES: '1073741824',
      ISSUE_EVENTS_MAX_MSGS: '10000000',
      ISSUE_EVENTS_MAX_AGE_HOURS: '168',
      ISSUE_EVENTS_DISCARD: 'new',
    });
  }
  for (const name of ['gateway', 'token', 'project', 'webhook']) expect(configOf(objects, name).ISSUE_EVENTS_REPLICAS).toBeUndefined();
  expect(configOf(objects, 'issue').OUTBOX_DEAD_LETTER_RETENTION_DAYS).toBe('30');
  expect(configOf(objects, 'delivery')).toMatchObject({ DELIVERY_RETENTION_DAYS: '30', DELIVERY_RETENTION_BATCH_SIZE: '5000', DELIVERY_RETENTION_INTERVAL_MS: '60000' });
});

test('the values reach the services, and the development deployment fits its single NATS server', () => {
  const objects = render({ ...minimal, set: ['nats.stream.replicas=5', 'nats.stream.maxBytes=4294967296', 'delivery.retention.batchSize=20000'] });
  expect(configOf(objects, 'issue')).toMatchObject({ ISSUE_EVENTS_REPLICAS: '5', ISSUE_EVENTS_MAX_BYTES: '4294967296' });
  expect(configOf(objects, 'delivery').DELIVERY_RETENTION_BATCH_SIZE).toBe('20000');
  expect(configOf(renderCi('deploy/values-development.yaml'), 'issue')).toMatchObject({ ISSUE_EVENTS_REPLICAS: '1', ISSUE_EVENTS_MAX_BYTES: '536870912' });
});

test.each([
  ['an unknown discard policy', ['nats.stream.discard=oldest'], '/nats/stream/discard'],
  ['zero replicas', ['nats.stream.replicas=0'], '/nats/stream/replicas'],
  ['a stream smaller than 64 KiB', ['nats.stream.maxBytes=1000'], '/nats/stream/maxBytes'],
  ['a retention batch below 100', ['delivery.retention.batchSize=10'], '/delivery/retention/batchSize'],
  ['retention settings on another service', ['issue.retention.days=3'], '/issue'],
])('rejects %s', (_, set, message) => {
  expect(renderFailure({ ...minimal, set })).toContain(message);
});

describe('alerts', () => {
  const [rule] = ofKind(render({ valuesFile: 'all-enabled-values.yaml', namespace: 'wl-prod' }), 'PrometheusRule');
  const alerts = rule.spec.groups.flatMap((group) => group.rules);
  const alert = (name) => alerts.find((candidate) => candidate.alert === name);

  test('WorklaneEventStreamNearlyFull fires above 80% of the byte, message or age limit, ignoring unlimited ones', () => {
    const { expr } = alert('WorklaneEventStreamNearlyFull');
    for (const [used, limit] of [
      ['bytes', 'max_bytes'],
      ['messages', 'max_messages'],
      ['oldest_age_seconds', 'max_age_seconds'],
    ]) {
      expect(expr).toMatch(new RegExp(`worklane_stream_${used}\\{[^}]*\\} / \\(worklane_stream_${limit}\\{[^}]*\\} > 0\\)\\) > 0\\.8`));
    }
  });

  test('WorklaneOutboxDeadLettered fires on any dead-lettered event, by reason', () => {
    expect(alert('WorklaneOutboxDeadLettered').expr).toMatch(/sum by \(reason\) \(increase\(worklane_outbox_dead_lettered_total\{[^}]*\}\[15m\]\)\) > 0/);
  });
});
