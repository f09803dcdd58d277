import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { render } from '../src/helm.mjs';
import { DATABASE_SERVICES, byComponent, component, envOf, ofKind } from '../src/objects.mjs';

const secretRef = (container, name) => envOf(container)[name]?.valueFrom?.secretKeyRef;
const mainContainer = (workload) => workload.spec.template.spec.containers[0];

describe('generated keys (no existingSecret)', () => {
  const objects = render({ valuesFile: 'minimal-values.yaml' });
  const keys = ofKind(objects, 'Secret').find((s) => s.metadata.name.endsWith('-keys'));

  test('the chart creates the keys Secret once, keeps it on uninstall and fills WEBHOOK_SECRET_KEY with >= 32 characters', () => {
    expect(keys.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    expect(Buffer.from(keys.data.WEBHOOK_SECRET_KEY, 'base64').toString().length).toBeGreaterThanOrEqual(32);
    expect(keys.data.IDENTITY_SIGNING_KEY).toBeUndefined();
  });

  test('only the webhook service gets WEBHOOK_SECRET_KEY', () => {
    for (const deployment of ofKind(objects, 'Deployment')) {
      const webhookKey = secretRef(mainContainer(deployment), 'WEBHOOK_SECRET_KEY');
      expect(Boolean(webhookKey)).toBe(component(deployment) === 'webhook');
    }
  });
});

describe('signing keys (only the gateway and the console mint identities)', () => {
  const objects = render({ valuesFile: 'minimal-values.yaml' });
  const signing = Object.fromEntries(
    ofKind(objects, 'Secret')
      .filter((s) => s.metadata.labels?.['worklane.dev/signing-principal'])
      .map((s) => [s.metadata.labels['worklane.dev/signing-principal'], s]),
  );
  const pem = (secret, key) => Buffer.from(secret.data[key], 'base64').toString();
  // Whose public keys each service holds, as its configuration (src/config.ts) reads them; a
  // service not listed holds none (a new service that trusts a principal must be added here).
  const TRUSTS = {
    gateway: [],
    console: [],
    token: ['gateway', 'console', 'issue', 'cli'],
    project: ['gateway', 'console', 'issue', 'cli'],
    webhook: ['gateway', 'console', 'delivery'],
    issue: ['gateway', 'console'],
    delivery: ['gateway', 'console'],
  };
  const SIGNS = ['gateway', 'console', 'issue', 'delivery'];

  test('one Ed25519 key pair per principal, kept on uninstall; the certificate holds the public key of the private key', () => {
    expect(Object.keys(signing).sort()).toEqual(['cli', 'console', 'delivery', 'gateway', 'issue']);
    const keys = new Set();
    for (const secret of Object.values(signing)) {
      expect(secret.type).toBe('kubernetes.io/tls');
      expect(secret.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
      const privateKey = createPrivateKey(pem(secret, 'tls.key'));
      expect(privateKey.asymmetricKeyType).toBe('ed25519');
      const publicKey = new X509Certificate(pem(secret, 'tls.crt')).publicKey;
      expect(publicKey.equals(createPublicKey(privateKey))).toBe(true);
      expect(verify(null, Buffer.from('x'), publicKey, sign(null, Buffer.from('x'), privateKey))).toBe(true);
      keys.add(secret.data['tls.key']);
    }
    expect(keys.size).toBe(5);
  });

  test("a pod references only its own private key (tls.key) and the other principals' certificates (tls.crt)", () => {
    for (const deployment of ofKind(objects, 'Deployment')) {
      const name = component(deployment);
      const env = mainContainer(deployment).env ?? [];
      const signingRefs = env
        .map((entry) => ({ name: entry.name, ref: entry.valueFrom?.secretKeyRef }))
        .filter(({ ref }) => ref && Object.values(signing).some((s) => s.metadata.name === ref.name));
      const privateRefs = signingRefs.filter(({ ref }) => ref.key !== 'tls.crt');
      if (SIGNS.includes(name)) {
        expect(privateRefs).toEqual([{ name: 'SIGNING_PRIVATE_KEY', ref: { name: signing[name].metadata.name, key: 'tls.key' } }]);
      } else {
        expect(privateRefs).toEqual([]);
      }
      const publicRefs = signingRefs.filter(({ ref }) => ref.key === 'tls.crt');
      expect(publicRefs.map((r) => r.name).sort()).toEqual((TRUSTS[name] ?? []).map((p) => `${p.toUpperCase()}_PUBLIC_KEY`).sort());
      for (const { name: variable, ref } of publicRefs) {
        expect(ref.name).toBe(signing[variable.replace('_PUBLIC_KEY', '').toLowerCase()].metadata.name);
      }
    }
  });

  test('an existing Secret replaces a generated pair, and an unknown principal is refused', () => {
    const rendered = render({ valuesFile: 'minimal-values.yaml', set: ['secrets.signingKeys.existingSecrets.gateway=my-gateway-key'] });
    expect(ofKind(rendered, 'Secret').some((s) => s.metadata.labels?.['worklane.dev/signing-principal'] === 'gateway')).toBe(false);
    expect(secretRef(mainContainer(byComponent(rendered, 'Deployment', 'gateway')), 'SIGNING_PRIVATE_KEY')).toEqual({ name: 'my-gateway-key', key: 'tls.key' });
    expect(secretRef(mainContainer(byComponent(rendered, 'Deployment', 'project')), 'GATEWAY_PUBLIC_KEY')).toEqual({ name: 'my-gateway-key', key: 'tls.crt' });
    expect(() => render({ valuesFile: 'minimal-values.yaml', set: ['secrets.signingKeys.existingSecrets.token=x'] })).toThrow();
  });
});

describe('existing Secrets', () => {
  const objects = render({
    valuesFile: 'production-values.yaml',
    set: ['secrets.webhookSecretKeyKey=webhook-encryption'],
  });

  test('with secrets.existingSecret and existing signing Secrets the chart generates no keys and every service reads the named keys', () => {
    expect(ofKind(objects, 'Secret')).toEqual([]);
    expect(secretRef(mainContainer(byComponent(objects, 'Deployment', 'gateway')), 'SIGNING_PRIVATE_KEY')).toEqual({ name: 'worklane-signing-gateway', key: 'tls.key' });
    expect(secretRef(mainContainer(byComponent(objects, 'Deployment', 'webhook')), 'WEBHOOK_SECRET_KEY')).toEqual({ name: 'worklane-keys', key: 'webhook-encryption' });
  });

  test("each service and its migration Job read DATABASE_URL from that service's own Secret", () => {
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

describe('the production examples give every database service of the service table its own role and Secret', () => {
  const repository = path.join(import.meta.dirname, '..', '..', '..');
  const read = (file) => fs.readFileSync(path.join(repository, file), 'utf8');
  const values = (file) => YAML.parse(read(file));

  test.each(['deploy/values-production.yaml', 'charts/worklane/ci/production-values.yaml'])('%s names worklane-db-<service> for each', (file) => {
    const given = values(file);
    for (const name of DATABASE_SERVICES) expect([name, given[name]?.database?.existingSecret?.name]).toEqual([name, `worklane-db-${name}`]);
  });

  test('deploy/postgres/cluster.yaml has a managed role and a Database for each', () => {
    const documents = YAML.parseAllDocuments(read('deploy/postgres/cluster.yaml')).map((document) => document.toJS());
    const cluster = documents.find((document) => document?.kind === 'Cluster');
    const roles = cluster.spec.managed.roles.map((role) => [role.name, role.passwordSecret.name]);
    const databases = documents.filter((document) => document?.kind === 'Database').map((database) => [database.spec.name, database.spec.owner]);
    for (const name of DATABASE_SERVICES) {
      expect(roles).toContainEqual([name, `worklane-db-${name}`]);
      expect(databases).toContainEqual([name, name]);
    }
  });

  test('deploy/postgres/create-secrets.sh creates a Secret for each', () => {
    const loop = /^for service in ([a-z ]+); do$/m.exec(read('deploy/postgres/create-secrets.sh'));
    expect(loop?.[1].split(' ').sort()).toEqual([...DATABASE_SERVICES].sort());
  });
});
