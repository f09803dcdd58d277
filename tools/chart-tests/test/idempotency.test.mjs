import { render } from '../src/helm.mjs';
import { byComponent } from '../src/objects.mjs';

// The services whose POSTs honour an Idempotency-Key read the same settings (docs/api-idempotency.md).
const KEEPING_KEYS = ['project', 'webhook', 'issue', 'delivery'];

describe('idempotency values', () => {
  test('reach every service that keeps Idempotency-Keys, and only those, with their defaults', () => {
    const objects = render({ valuesFile: 'minimal-values.yaml' });
    for (const name of KEEPING_KEYS) {
      const { data } = byComponent(objects, 'ConfigMap', name);
      expect([name, data.IDEMPOTENCY_KEY_TTL_HOURS, data.IDEMPOTENCY_LEASE_MS, data.IDEMPOTENCY_RESPONSE_MAX_BYTES]).toEqual([name, '24', '60000', '262144']);
      expect([name, data.IDEMPOTENCY_RETENTION_INTERVAL_MS, data.IDEMPOTENCY_RETENTION_BATCH_SIZE]).toEqual([name, '60000', '5000']);
    }
    for (const name of ['gateway', 'token', 'console']) expect([name, byComponent(objects, 'ConfigMap', name).data.IDEMPOTENCY_KEY_TTL_HOURS]).toEqual([name, undefined]);
  });

  test('are configurable', () => {
    const objects = render({ valuesFile: 'minimal-values.yaml', set: ['idempotency.keyTtlHours=48', 'idempotency.leaseMs=5000'] });
    for (const name of KEEPING_KEYS) {
      const { data } = byComponent(objects, 'ConfigMap', name);
      expect([name, data.IDEMPOTENCY_KEY_TTL_HOURS, data.IDEMPOTENCY_LEASE_MS]).toEqual([name, '48', '5000']);
    }
  });

  test('are refused outside the ranges the services accept', () => {
    expect(() => render({ valuesFile: 'minimal-values.yaml', set: ['idempotency.keyTtlHours=0'] })).toThrow(/keyTtlHours/);
    expect(() => render({ valuesFile: 'minimal-values.yaml', set: ['idempotency.responseMaxBytes=1024'] })).toThrow(/responseMaxBytes/);
  });
});
