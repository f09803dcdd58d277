import { render, renderCi, renderFailure } from '../src/helm.mjs';
import { byComponent, ofKind } from '../src/objects.mjs';

// The WEBHOOK_CHANGES stream and the delivery service's webhook cache (docs/webhook-directory-cache.md).
const minimal = { valuesFile: 'minimal-values.yaml' };
const configOf = (objects, name) => byComponent(objects, 'ConfigMap', name).data;

test('the webhook and delivery services get the same WEBHOOK_CHANGES limits, and only they do', () => {
  const objects = render(minimal);
  for (const name of ['webhook', 'delivery']) {
    expect(configOf(objects, name)).toMatchObject({ WEBHOOK_CHANGES_REPLICAS: '3', WEBHOOK_CHANGES_MAX_AGE_SECONDS: '3600', WEBHOOK_CHANGES_MAX_MSGS: '100000' });
  }
  for (const name of ['gateway', 'token', 'project', 'issue']) expect(configOf(objects, name).WEBHOOK_CHANGES_REPLICAS).toBeUndefined();
  // The webhook service publishes notices, not events: NATS, without the event stream's limits.
  expect(configOf(objects, 'webhook').NATS_URL).toBe('nats://nats:4222');
  expect(configOf(objects, 'webhook').ISSUE_EVENTS_REPLICAS).toBeUndefined();
  expect(configOf(objects, 'webhook').WEBHOOK_CHANGE_PUBLISH_TIMEOUT_MS).toBe('5000');
  expect(configOf(objects, 'delivery')).toMatchObject({
    DELIVERY_WEBHOOK_CACHE_MAX_ENTRIES: '10000',
    DELIVERY_WEBHOOK_CACHE_TTL_MS: '600000',
    DELIVERY_WEBHOOK_CACHE_SYNC_TIMEOUT_MS: '1000',
  });
});

test('the values reach the services, 0 turns the cache off, and the development deployment fits its single NATS server', () => {
  const objects = render({
    ...minimal,
    set: ['nats.webhookChanges.replicas=5', 'webhookDelivery.webhookCacheMaxEntries=0', 'webhookDelivery.webhookCacheTtlMs=60000', 'webhook.changePublishTimeoutMs=2000'],
  });
  expect(configOf(objects, 'webhook')).toMatchObject({ WEBHOOK_CHANGES_REPLICAS: '5', WEBHOOK_CHANGE_PUBLISH_TIMEOUT_MS: '2000' });
  expect(configOf(objects, 'delivery')).toMatchObject({ WEBHOOK_CHANGES_REPLICAS: '5', DELIVERY_WEBHOOK_CACHE_MAX_ENTRIES: '0', DELIVERY_WEBHOOK_CACHE_TTL_MS: '60000' });
  expect(configOf(renderCi('deploy/values-development.yaml'), 'webhook').WEBHOOK_CHANGES_REPLICAS).toBe('1');
});

test("the webhook service's pods may reach NATS", () => {
  const objects = render({ ...minimal, set: ['networkPolicy.enabled=true'] });
  const policy = ofKind(objects, 'NetworkPolicy').find((candidate) => candidate.metadata.name.endsWith('-webhook'));
  expect(policy).toBeDefined();
  const ports = policy.spec.egress.flatMap((rule) => (rule.ports ?? []).map((port) => port.port));
  expect(ports).toContain(4222);
});

test.each([
  ['zero stream replicas', ['nats.webhookChanges.replicas=0'], '/nats/webhookChanges/replicas'],
  ['notices kept under a minute', ['nats.webhookChanges.maxAgeSeconds=10'], '/nats/webhookChanges/maxAgeSeconds'],
  ['a negative cache size', ['webhookDelivery.webhookCacheMaxEntries=-1'], '/webhookDelivery/webhookCacheMaxEntries'],
  ['a cache TTL under a second', ['webhookDelivery.webhookCacheTtlMs=10'], '/webhookDelivery/webhookCacheTtlMs'],
  ['a publish timeout on another service', ['issue.changePublishTimeoutMs=1000'], '/issue'],
])('rejects %s', (_, set, message) => {
  expect(renderFailure({ ...minimal, set })).toContain(message);
});
