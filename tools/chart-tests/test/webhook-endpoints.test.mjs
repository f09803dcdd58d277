import { render, renderFailure } from '../src/helm.mjs';
import { byComponent } from '../src/objects.mjs';

// Secret rotation bounds and the highest per-endpoint rate limit reach the webhook service, which validates them.
const settingsOf = (objects) => {
  const data = byComponent(objects, 'ConfigMap', 'webhook').data;
  return [data.WEBHOOK_PREVIOUS_SECRETS_MAX, data.WEBHOOK_SECRET_OVERLAP_DEFAULT_SECONDS, data.WEBHOOK_SECRET_OVERLAP_MAX_SECONDS, data.WEBHOOK_RATE_LIMIT_MAX_PER_SECOND];
};

describe('webhookEndpoints values', () => {
  test('reach the webhook service with their defaults (5 old secrets, 24 h, 7 days, 1,000/s), and no other service', () => {
    const objects = render({ valuesFile: 'minimal-values.yaml' });
    expect(settingsOf(objects)).toEqual(['5', '86400', '604800', '1000']);
    expect(byComponent(objects, 'ConfigMap', 'delivery').data.WEBHOOK_PREVIOUS_SECRETS_MAX).toBeUndefined();
  });

  test('are configurable', () => {
    const objects = render({
      valuesFile: 'minimal-values.yaml',
      set: [
        'webhookEndpoints.previousSecretsMax=2',
        'webhookEndpoints.secretOverlapDefaultSeconds=600',
        'webhookEndpoints.secretOverlapMaxSeconds=3600',
        'webhookEndpoints.rateLimitMaxPerSecond=50',
      ],
    });
    expect(settingsOf(objects)).toEqual(['2', '600', '3600', '50']);
  });

  test('refuse a default overlap longer than the longest allowed', () => {
    const stderr = renderFailure({
      valuesFile: 'minimal-values.yaml',
      set: ['webhookEndpoints.secretOverlapDefaultSeconds=7200', 'webhookEndpoints.secretOverlapMaxSeconds=3600'],
    });
    expect(stderr).toMatch(/secretOverlapDefaultSeconds \(7200\) must not exceed/);
  });
});
