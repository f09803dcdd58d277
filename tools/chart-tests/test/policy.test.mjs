import { render, renderCi, valueSets } from '../src/helm.mjs';
import { DATABASE_SERVICES, SERVICES, STABLE_SELECTOR_KEYS, byComponent, component, containers, envOf, ofKind, podTemplates, selects, selectors } from '../src/objects.mjs';

describe.each(valueSets)('chart policies with %s', (valuesFile) => {
  const objects = renderCi(valuesFile);
  const deployments = ofKind(objects, 'Deployment');

  test('there is one Deployment per service', () => {
    expect(deployments.map(component).sort()).toEqual([...SERVICES].sort());
  });

  test('every container sets CPU and memory requests and a memory limit', () => {
    const missing = containers(objects)
      .filter(({ container: { resources } }) => !(resources?.requests?.cpu && resources?.requests?.memory && resources?.limits?.memory))
      .map(({ owner }) => owner);
    expect(missing).toEqual([]);
  });

  test('every service container has startup, liveness and readiness probes', () => {
    const missing = containers(deployments)
      .filter(({ container }) => !(container.livenessProbe && container.readinessProbe && container.startupProbe))
      .map(({ owner }) => owner);
    expect(missing).toEqual([]);
  });

  test('liveness asks /healthz, readiness /readyz, and the token service uses the native gRPC probe on 7001', () => {
    for (const deployment of deployments) {
      const [container] = deployment.spec.template.spec.containers;
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      if (component(deployment) === 'token') {
        expect(container.readinessProbe).toEqual(expect.objectContaining({ grpc: { port: 7001 } }));
        expect(container.readinessProbe.httpGet).toBeUndefined();
      } else {
        expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      }
    }
  });

  test('every container runs as non-root with a read-only root filesystem, no privilege escalation and no capabilities', () => {
    const offenders = containers(objects)
      .filter(({ container, pod }) => {
        const context = container.securityContext ?? {};
        const podContext = pod.spec.securityContext ?? {};
        const nonRoot = (context.runAsNonRoot ?? podContext.runAsNonRoot) === true && (context.runAsUser ?? podContext.runAsUser) !== 0;
        const seccomp = (context.seccompProfile ?? podContext.seccompProfile)?.type === 'RuntimeDefault';
        return !(
          nonRoot &&
          seccomp &&
          context.readOnlyRootFilesystem === true &&
          context.allowPrivilegeEscalation === false &&
          context.privileged !== true &&
          context.capabilities?.drop?.includes('ALL') &&
          !(context.capabilities?.add ?? []).length
        );
      })
      .map(({ owner }) => owner);
    expect(offenders).toEqual([]);
  });

  test('with a read-only root filesystem every pod mounts an emptyDir at /tmp', () => {
    for (const { owner, container, pod } of containers(objects)) {
      const mount = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
      expect({ owner, mount: Boolean(mount) }).toEqual({ owner, mount: true });
      expect(pod.spec.volumes.find((v) => v.name === mount.name).emptyDir).toBeDefined();
    }
  });

  test('no pod mounts a Kubernetes API token or uses host namespaces', () => {
    for (const pod of podTemplates(objects)) {
      expect({ owner: pod.owner, automount: pod.spec.automountServiceAccountToken }).toEqual({ owner: pod.owner, automount: false });
      expect(pod.spec.hostNetwork || pod.spec.hostPID || pod.spec.hostIPC || false).toBe(false);
    }
    for (const account of ofKind(objects, 'ServiceAccount')) {
      expect(account.automountServiceAccountToken).toBe(false);
    }
  });

  test('every Deployment that can run more than one pod has a PodDisruptionBudget selecting its pods; a single pod has none', () => {
    const budgets = ofKind(objects, 'PodDisruptionBudget');
    const autoscalers = ofKind(objects, 'HorizontalPodAutoscaler');
    for (const deployment of deployments) {
      const autoscaler = autoscalers.find((hpa) => hpa.spec.scaleTargetRef.name === deployment.metadata.name);
      const pods = autoscaler ? autoscaler.spec.maxReplicas : deployment.spec.replicas;
      const labels = deployment.spec.template.metadata.labels;
      const covering = budgets.filter((pdb) => selects(pdb.spec.selector.matchLabels, labels));
      expect({ deployment: deployment.metadata.name, budgets: covering.length }).toEqual({ deployment: deployment.metadata.name, budgets: pods > 1 ? 1 : 0 });
    }
  });

  test('selectors use only the stable labels name, instance and component', () => {
    const found = selectors(objects);
    expect(found.length).toBeGreaterThan(deployments.length * 4);
    const unstable = found.filter(({ matchLabels }) => Object.keys(matchLabels).some((key) => !STABLE_SELECTOR_KEYS.includes(key)));
    expect(unstable).toEqual([]);
    for (const deployment of deployments) {
      expect(Object.keys(deployment.spec.selector.matchLabels).sort()).toEqual([...STABLE_SELECTOR_KEYS].sort());
    }
  });

  test('each Service selects exactly the pods of its own Deployment', () => {
    for (const service of ofKind(objects, 'Service')) {
      const matching = deployments.filter((d) => selects(service.spec.selector, d.spec.template.metadata.labels));
      expect(matching.map((d) => d.metadata.name)).toEqual([service.metadata.name]);
      const ports = matching[0].spec.template.spec.containers[0].ports.map((p) => p.name);
      for (const port of service.spec.ports) expect(ports).toContain(port.targetPort);
    }
  });

  test('object names and label values fit 63 characters', () => {
    for (const object of objects) {
      expect(object.metadata.name.length).toBeLessThanOrEqual(63);
      expect(object.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      for (const value of Object.values(object.metadata.labels ?? {})) expect(String(value).length).toBeLessThanOrEqual(63);
    }
  });

  test('pods roll when their configuration changes: checksum annotations on every Deployment', () => {
    for (const deployment of deployments) {
      expect(deployment.spec.template.metadata.annotations).toEqual(
        expect.objectContaining({ 'checksum/config': expect.stringMatching(/^[a-f0-9]{64}$/), 'checksum/secret': expect.stringMatching(/^[a-f0-9]{64}$/) }),
      );
    }
  });

  test("containers keep the image's command, so they run what `npm start` runs", () => {
    for (const { owner, container } of containers(deployments)) {
      expect({ owner, command: container.command, args: container.args }).toEqual({ owner, command: undefined, args: undefined });
    }
  });

  test('every envFrom ConfigMap is rendered, and services get the environment docs/architecture.md names', () => {
    const configMaps = new Map(ofKind(objects, 'ConfigMap').map((cm) => [cm.metadata.name, cm]));
    for (const deployment of deployments) {
      const [container] = deployment.spec.template.spec.containers;
      // The chart's own ConfigMap comes last (it wins); any before it are the operator's extraEnvFrom.
      const { configMapRef } = container.envFrom.at(-1);
      const data = configMaps.get(configMapRef.name)?.data;
      expect(data).toBeDefined();
      expect(data).toEqual(expect.objectContaining({ HOST: expect.any(String), HTTP_PORT: String(container.ports[0].containerPort) }));
      const env = envOf(container);
      expect(env.IDENTITY_SIGNING_KEY).toBeUndefined();
      if (DATABASE_SERVICES.includes(component(deployment))) {
        expect(env.DATABASE_URL?.valueFrom?.secretKeyRef).toBeDefined();
        expect(data.DATABASE_SCHEMA).toBeDefined();
      }
    }
    const gateway = configMaps.get(byComponent(objects, 'Deployment', 'gateway').metadata.name).data;
    expect(Object.keys(gateway)).toEqual(
      expect.arrayContaining(['TOKEN_SERVICE_ADDR', 'PROJECT_SERVICE_URL', 'WEBHOOK_SERVICE_URL', 'ISSUE_SERVICE_URL', 'DELIVERY_SERVICE_URL', 'CONSOLE_SERVICE_URL']),
    );
    expect(configMaps.get(byComponent(objects, 'Deployment', 'issue').metadata.name).data.PROJECT_GRPC_ADDR).toMatch(/-project:7002$/);
    expect(configMaps.get(byComponent(objects, 'Deployment', 'delivery').metadata.name).data.WEBHOOK_GRPC_ADDR).toMatch(/-webhook:7003$/);
  });

  test('an autoscaled Deployment leaves replicas to its HPA', () => {
    for (const hpa of ofKind(objects, 'HorizontalPodAutoscaler')) {
      const target = deployments.find((d) => d.metadata.name === hpa.spec.scaleTargetRef.name);
      expect(target).toBeDefined();
      expect(target.spec.replicas).toBeUndefined();
    }
  });

  test("migrations run in one pre-install/pre-upgrade Job per database service, in that service's image", () => {
    const jobs = ofKind(objects, 'Job');
    expect(jobs.map((job) => job.metadata.labels['worklane.dev/service']).sort()).toEqual([...DATABASE_SERVICES].sort());
    for (const job of jobs) {
      const service = job.metadata.labels['worklane.dev/service'];
      expect(job.metadata.annotations).toEqual(
        expect.objectContaining({
          'helm.sh/hook': 'pre-install,pre-upgrade',
          'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
        }),
      );
      const [container] = job.spec.template.spec.containers;
      expect(container.command).toEqual(['node', '/app/tools/worklane/bin/worklane.mjs', 'migrate', '--service', service]);
      const deployment = byComponent(objects, 'Deployment', service);
      expect(container.image).toBe(deployment.spec.template.spec.containers[0].image);
      expect(envOf(container).DATABASE_SCHEMA.value).toBeTruthy();
      expect(envOf(container).DATABASE_URL.valueFrom.secretKeyRef).toBeDefined();
      // The Job's pods must not look like the service's pods to its Service, PDB or NetworkPolicy.
      expect(component(job.spec.template)).toBe('migrate');
    }
    // Hook objects the Jobs need are created first (`helm test` hooks run only at `helm test`).
    const jobWeight = Number(jobs[0].metadata.annotations['helm.sh/hook-weight']);
    for (const object of objects.filter((o) => o.kind !== 'Job' && /pre-(install|upgrade)/.test(o.metadata.annotations?.['helm.sh/hook'] ?? ''))) {
      expect(Number(object.metadata.annotations['helm.sh/hook-weight'])).toBeLessThan(jobWeight);
    }
  });
});

test('selectors do not change when the image tag, labels or annotations change, so upgrades keep matching', () => {
  const base = render({ valuesFile: 'minimal-values.yaml' });
  const changed = render({
    valuesFile: 'minimal-values.yaml',
    set: ['image.tag=9.9.9', 'commonLabels.team=other', 'gateway.podLabels.extra=yes', 'token.podAnnotations.a=b', 'logLevel=debug'],
  });
  expect(selectors(changed)).toEqual(selectors(base));
});

test('names stay within 63 characters and unique with the longest release name Helm allows', () => {
  const release = 'a'.repeat(53);
  const objects = render({ valuesFile: 'all-enabled-values.yaml', release, set: ['fullnameOverride='] });
  const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
  expect(new Set(names).size).toBe(names.length);
  for (const object of objects) {
    expect(object.metadata.name.length).toBeLessThanOrEqual(63);
    expect(object.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  }
  for (const service of ofKind(objects, 'Service')) expect(service.metadata.name).toMatch(/^[a-z]/);
});

test('migrations switched off: no Jobs, and services migrate at start', () => {
  const objects = render({ valuesFile: 'minimal-values.yaml', set: ['migrations.enabled=false'] });
  expect(ofKind(objects, 'Job')).toEqual([]);
  for (const name of DATABASE_SERVICES) {
    const configMap = byComponent(objects, 'ConfigMap', name);
    expect(configMap.data.MIGRATE_ON_START).toBe('true');
  }
  expect(byComponent(render({ valuesFile: 'minimal-values.yaml' }), 'ConfigMap', 'token').data.MIGRATE_ON_START).toBe('false');
});

describe('console client address', () => {
  const trustProxy = (objects) => byComponent(objects, 'ConfigMap', 'console').data.CONSOLE_TRUST_PROXY;

  test('the console trusts exactly the hops in front of it: the gateway, and the ingress controller when the chart has one', () => {
    expect(trustProxy(render({ valuesFile: 'minimal-values.yaml', set: ['ingress.enabled=false'] }))).toBe('1');
    expect(trustProxy(render({ valuesFile: 'production-values.yaml' }))).toBe('2');
    expect(trustProxy(render({ valuesFile: 'minimal-values.yaml', set: ['console.env.CONSOLE_TRUST_PROXY=10.0.0.0/8'] }))).toBe('10.0.0.0/8');
  });
});
