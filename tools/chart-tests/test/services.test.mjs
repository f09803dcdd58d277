// The per-service settings: `serviceDefaults` under every service's own block, the image tag of one
// service, and its PodDisruptionBudget.
import { render } from '../src/helm.mjs';
import { SERVICES, byComponent, ofKind } from '../src/objects.mjs';
import { serviceTable } from '../src/service-table.mjs';

const minimal = { valuesFile: 'minimal-values.yaml' };
const imageOf = (objects, name) => byComponent(objects, 'Deployment', name).spec.template.spec.containers[0].image;
const migrationImageOf = (objects, name) => ofKind(objects, 'Job').find((job) => job.metadata.labels['worklane.dev/service'] === name)?.spec.template.spec.containers[0].image;
const budgetOf = (objects, name) => byComponent(objects, 'PodDisruptionBudget', name);

describe('per-service image tag', () => {
  test('<service>.image.tag rolls that service alone, its migration Job with it; the others keep image.tag', () => {
    const objects = render({ ...minimal, set: ['image.tag=1.4.0', 'issue.image.tag=1.5.0-rc.1'] });
    const issue = serviceTable().find((service) => service.name === 'issue');
    expect(imageOf(objects, 'issue')).toBe(`docker.io/worklane/${issue.image}:1.5.0-rc.1`);
    expect(migrationImageOf(objects, 'issue')).toBe(imageOf(objects, 'issue'));
    for (const name of SERVICES.filter((s) => s !== 'issue')) {
      expect([name, imageOf(objects, name)]).toEqual([name, `docker.io/worklane/${name}:1.4.0`]);
    }
    expect(migrationImageOf(objects, 'token')).toBe('docker.io/worklane/token:1.4.0');
  });

  test("with no tag of its own nor image.tag, a service runs the chart's appVersion; a digest pins it whatever the tags", () => {
    const objects = render({ ...minimal, set: ['delivery.image.digest=sha256:' + 'a'.repeat(64), 'delivery.image.tag=9.9.9'] });
    expect(imageOf(objects, 'delivery')).toBe(`docker.io/worklane/delivery@sha256:${'a'.repeat(64)}`);
    expect(imageOf(objects, 'gateway')).toMatch(/^docker\.io\/worklane\/gateway:\d+\.\d+\.\d+/);
  });

  test("a service's image tag is the service.version of its spans", () => {
    const objects = render({ ...minimal, set: ['webhook.image.tag=2.0.1'] });
    const env = byComponent(objects, 'Deployment', 'webhook').spec.template.spec.containers[0].env;
    expect(env.find((entry) => entry.name === 'OTEL_RESOURCE_ATTRIBUTES').value).toContain('service.version=2.0.1');
  });
});

describe('serviceDefaults', () => {
  test('every service takes them; its own block wins key by key', () => {
    const objects = render({
      ...minimal,
      set: ['serviceDefaults.replicaCount=3', 'serviceDefaults.podLabels.tier=backend', 'token.replicaCount=4', 'token.podLabels.tier=auth'],
    });
    for (const name of SERVICES.filter((s) => s !== 'token')) {
      const deployment = byComponent(objects, 'Deployment', name);
      expect([name, deployment.spec.replicas, deployment.spec.template.metadata.labels.tier]).toEqual([name, 3, 'backend']);
    }
    const token = byComponent(objects, 'Deployment', 'token');
    expect([token.spec.replicas, token.spec.template.metadata.labels.tier]).toEqual([4, 'auth']);
  });

  test("a service's partial resources keep the rest of serviceDefaults.resources", () => {
    const objects = render({ ...minimal, set: ['gateway.resources.requests.cpu=750m'] });
    expect(byComponent(objects, 'Deployment', 'gateway').spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: '750m', memory: '128Mi' },
      limits: { memory: '256Mi' },
    });
  });

  test("false and zero in a service's block override true and non-zero defaults", () => {
    const objects = render({
      ...minimal,
      set: [
        'issue.pdb.enabled=false',
        'serviceDefaults.autoscaling.targetMemoryUtilizationPercentage=80',
        'issue.autoscaling.enabled=true',
        'issue.autoscaling.targetMemoryUtilizationPercentage=0',
      ],
    });
    expect(budgetOf(objects, 'issue')).toBeUndefined();
    const hpa = byComponent(objects, 'HorizontalPodAutoscaler', 'issue');
    expect(hpa.spec.metrics.map((metric) => metric.resource.name)).toEqual(['cpu']);
  });
});

describe('PodDisruptionBudgets', () => {
  test('by default every service (2 replicas) has one letting one pod go at a time, evicting unhealthy pods', () => {
    const objects = render(minimal);
    for (const name of SERVICES) {
      const budget = budgetOf(objects, name);
      expect([name, budget?.spec.maxUnavailable, budget?.spec.unhealthyPodEvictionPolicy]).toEqual([name, 1, 'AlwaysAllow']);
    }
  });

  test('a service with one pod has none, so it never blocks a node drain; with an autoscaler its maximum counts', () => {
    const objects = render({
      ...minimal,
      set: ['console.replicaCount=1', 'issue.replicaCount=1', 'issue.autoscaling.enabled=true', 'issue.autoscaling.minReplicas=1', 'issue.autoscaling.maxReplicas=4'],
    });
    expect(budgetOf(objects, 'console')).toBeUndefined();
    expect(budgetOf(objects, 'issue')?.spec.maxUnavailable).toBe(1);
    const single = render({ ...minimal, set: ['serviceDefaults.replicaCount=1'] });
    expect(ofKind(single, 'PodDisruptionBudget')).toEqual([]);
  });

  test('maxUnavailable is tunable per service or for all, as a number or a percentage; pdb.enabled=false turns them off', () => {
    const objects = render({ ...minimal, set: ['serviceDefaults.pdb.maxUnavailable=2', 'delivery.pdb.maxUnavailable=25%', 'gateway.pdb.enabled=false'] });
    expect(budgetOf(objects, 'token').spec.maxUnavailable).toBe(2);
    expect(budgetOf(objects, 'delivery').spec.maxUnavailable).toBe('25%');
    expect(budgetOf(objects, 'gateway')).toBeUndefined();
    expect(ofKind(render({ ...minimal, set: ['serviceDefaults.pdb.enabled=false'] }), 'PodDisruptionBudget')).toEqual([]);
  });
});
