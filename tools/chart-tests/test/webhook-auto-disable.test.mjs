import { render } from '../src/helm.mjs';
import { byComponent } from '../src/objects.mjs';

// Webhooks whose every attempt fails: the notice and auto-disable periods reach the delivery service.
const settingsOf = (objects) => {
  const data = byComponent(objects, 'ConfigMap', 'delivery').data;
  return [data.WEBHOOK_FAILING_NOTICE_AFTER_MS, data.WEBHOOK_DISABLE_AFTER_MS, data.WEBHOOK_HEALTH_CHECK_INTERVAL_MS];
};

describe('webhookAutoDisable values', () => {
  test('reach the delivery service with their defaults (a day, 5 days, a minute), and no other service', () => {
    const objects = render({ valuesFile: 'minimal-values.yaml' });
    expect(settingsOf(objects)).toEqual(['86400000', '432000000', '60000']);
    expect(byComponent(objects, 'ConfigMap', 'webhook').data.WEBHOOK_DISABLE_AFTER_MS).toBeUndefined();
  });

  test('are configurable, in whole milliseconds even past 2^31', () => {
    const objects = render({
      valuesFile: 'minimal-values.yaml',
      set: ['webhookAutoDisable.failingNoticeAfterMs=3600000', 'webhookAutoDisable.disableAfterMs=2592000000', 'webhookAutoDisable.checkIntervalMs=5000'],
    });
    expect(settingsOf(objects)).toEqual(['3600000', '2592000000', '5000']);
  });
});
