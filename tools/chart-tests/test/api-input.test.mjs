import { render, renderFailure } from '../src/helm.mjs';
import { byComponent } from '../src/objects.mjs';

const API_SERVICES = ['project', 'webhook', 'issue', 'delivery'];

describe('apiInput values', () => {
  test('reach the gateway (body limit) and the API services (422 size, query length) with their defaults', () => {
    const objects = render({ valuesFile: 'minimal-values.yaml' });
    expect(byComponent(objects, 'ConfigMap', 'gateway').data.REQUEST_BODY_MAX_BYTES).toBe('1048576');
    for (const name of API_SERVICES) {
      const { data } = byComponent(objects, 'ConfigMap', name);
      expect([name, data.HTTP_MAX_FIELD_ERRORS, data.HTTP_MAX_QUERY_VALUE_LENGTH]).toEqual([name, '20', '1024']);
    }
  });

  test('are configurable', () => {
    const objects = render({ valuesFile: 'minimal-values.yaml', set: ['apiInput.maxBodyBytes=65536', 'apiInput.maxFieldErrors=5', 'apiInput.maxQueryValueLength=256'] });
    expect(byComponent(objects, 'ConfigMap', 'gateway').data.REQUEST_BODY_MAX_BYTES).toBe('65536');
    expect(byComponent(objects, 'ConfigMap', 'issue').data).toMatchObject({ HTTP_MAX_FIELD_ERRORS: '5', HTTP_MAX_QUERY_VALUE_LENGTH: '256' });
  });

  test('refuse a body limit above the 1 MiB the services take', () => {
    expect(renderFailure({ valuesFile: 'minimal-values.yaml', set: ['apiInput.maxBodyBytes=2097152'] })).toMatch(/maxBodyBytes/);
  });
});
