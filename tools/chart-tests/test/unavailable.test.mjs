import { render } from '../src/helm.mjs';
import { byComponent } from '../src/objects.mjs';

// Every service that answers requests takes the Retry-After of its 503 (docs/operations.md).
const ANSWERING = ['gateway', 'console', 'project', 'webhook', 'issue', 'delivery'];

describe('unavailable values', () => {
  test('reach every service that answers requests with their default', () => {
    const objects = render({ valuesFile: 'minimal-values.yaml' });
    for (const name of ANSWERING) expect([name, byComponent(objects, 'ConfigMap', name).data.UNAVAILABLE_RETRY_AFTER_SECONDS]).toEqual([name, '5']);
    // The token service answers only its probes.
    expect(byComponent(objects, 'ConfigMap', 'token').data.UNAVAILABLE_RETRY_AFTER_SECONDS).toBeUndefined();
  });

  test('are configurable', () => {
    const objects = render({ valuesFile: 'minimal-values.yaml', set: ['unavailable.retryAfterSeconds=30'] });
    for (const name of ANSWERING) expect(byComponent(objects, 'ConfigMap', name).data.UNAVAILABLE_RETRY_AFTER_SECONDS).toBe('30');
  });
});
