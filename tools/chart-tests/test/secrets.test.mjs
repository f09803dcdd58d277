import { render } from '../src/helm.mjs';
import { DATABASE_SERVICES, byComponent, component, envOf, ofKind } from '../src/objects.mjs';

const secretRef = (container, name) => envOf(container)[name]?.valueFrom?.secretKeyRef;
const mainContainer = (workload) => workload.spec.template.spec.containers[0];

describe('generated keys (no existingSecret)', () => {
  const objects = render({ valuesFile: 'minimal-values.yaml' });
  const keys = ofKind(objects, 'Secret').find((s) => s.metadata.name.endsWith('-keys'));

  test('the chart creates the keys Secret once, keeps it on uninstall and fills both keys with >= 32 characters', () => {
    expect(keys.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    for (const key of ['IDENTITY_SIGNING_KEY', 'WEBHOOK_SECRET_KEY']) {
      expect(Buffer.from(keys.data[key], 'base64').toString().length).toBeGreaterThanOrEqual(32);
    }
    expect(keys.data.IDENTITY_SIGNING_KEY).not.toBe(keys.data.WEBHOOK_SECRET_KEY);
  });

  test('every service reads IDENTITY_SIGNING_KEY from it; only the webhook service gets WEBHOOK_SECRET_KEY', () => {
    for (const deployment of ofKind(objects, 'Deployment')) {
      expect(secretRef(mainContainer(deployment), 'IDENTITY_SIGNING_KEY')).toEqual({ name: keys.metadata.name, key: 'IDENTITY_SIGNING_KEY' });
      const webhookKey = secretRef(mainContainer(deployment), 'WEBHOOK_SECRET_KEY');
      expect(Boolean(webhookKey)).toBe(component(deployment) === 'webhook');
    }
  });
});

describe('existing Secrets', () => {
  const objects = render({
    valuesFile: 'production-values.yaml',
    set: ['secrets.identitySigningKeyKey=signing', 'secrets.webhookSecretKeyKey=webhook-encryption'],
  });

  test('with secrets.existingSecret the chart generates no keys and every service reads the named keys', () => {
    expect(ofKind(objects, 'Secret')).toEqual([]);
    for (const deployment of ofKind(objects, 'Deployment')) {
      expect(secretRef(mainContainer(deployment), 'IDENTITY_SIGNING_KEY')).toEqual({ name: 'worklane-keys', key: 'signing' });
    }
    expect(secretRef(mainContainer(byComponent(objects, 'Deployment', 'webhook')), 'WEBHOOK_SECRET_KEY')).toEqual({ name: 'worklane-keys', key: 'webhook-encryption' });
  });

  test('each service and its migration Job read DATABASE_URL from that service\'s own Secret', () => {
    for (const name of DATABASE_SERVICES) {
      const expected = { name: `worklane-db-${name}`, key: 'uri' };
      expect(secretRef(mainContainer(byComponent(objects, 'Deployment', name)), 'DATABASE_URL')).toEqual(expected);
      const job = ofKind(objects, 'Job').find((j) => j.metadata.labels['worklane.dev/service'] === name);
      expect(secretRef(mainContainer(job), 'DATABASE_URL')).toEqual(expected);
    }
  });

  test('a service without its own Secret falls back to database.existingSecret', () => {
    const fallback = render({ valuesFile: 'production-values.yaml', set: ['issue.database.existingSecret.name='] });
    expect(secretRef(mainContainer(byComponent(fallback, 'Deployment', 'issue')), 'DATABASE_URL')).toEqual({ name: 'worklane-db-app', key: 'uri' });
  });

  test('NATS credentials can come from a Secret instead of the ConfigMap', () => {
    const rendered = render({ valuesFile: 'all-enabled-values.yaml' });
    for (const name of ['issue', 'delivery']) {
      expect(secretRef(mainContainer(byComponent(rendered, 'Deployment', name)), 'NATS_URL')).toEqual({ name: 'worklane-nats', key: 'url' });
      expect(byComponent(rendered, 'ConfigMap', name).data.NATS_URL).toBeUndefined();
    }
  });
});

describe('database.url (development)', () => {
  const objects = render({ valuesFile: 'minimal-values.yaml' });

  test('the URL is stored in a Secret, never in a ConfigMap, and the migration Jobs read a hook copy that exists before them', () => {
    for (const configMap of ofKind(objects, 'ConfigMap')) expect(JSON.stringify(configMap.data)).not.toContain('postgres://');
    const hookSecret = ofKind(objects, 'Secret').find((s) => s.metadata.annotations?.['helm.sh/hook']);
    expect(hookSecret.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    for (const job of ofKind(objects, 'Job')) {
      expect(secretRef(mainContainer(job), 'DATABASE_URL')).toEqual({ name: hookSecret.metadata.name, key: 'DATABASE_URL' });
    }
    const serviceSecret = ofKind(objects, 'Secret').find((s) => s.metadata.name.endsWith('-database'));
    expect(secretRef(mainContainer(byComponent(objects, 'Deployment', 'token')), 'DATABASE_URL')).toEqual({ name: serviceSecret.metadata.name, key: 'DATABASE_URL' });
  });
});
