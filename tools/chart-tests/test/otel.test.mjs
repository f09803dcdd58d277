import { render, renderCi, renderFailure } from '../src/helm.mjs';
import { SERVICES, byComponent } from '../src/objects.mjs';

// The services' tracing reads OTEL_RESOURCE_ATTRIBUTES (@worklane/observability's env detector);
// the chart builds it from where each pod runs plus otel.resourceAttributes.
const attributesOf = (objects, name) => {
  const env = byComponent(objects, 'Deployment', name).spec.template.spec.containers[0].env;
  const index = env.findIndex((entry) => entry.name === 'OTEL_RESOURCE_ATTRIBUTES');
  return { env, index, attributes: Object.fromEntries(env[index].value.split(',').map((pair) => pair.split('='))) };
};

test('every service gets its release, version, namespace, Deployment, pod and node as resource attributes', () => {
  const objects = render({ valuesFile: 'minimal-values.yaml', namespace: 'wl-test', release: 'acme' });
  for (const name of SERVICES) {
    const { env, index, attributes } = attributesOf(objects, name);
    expect(attributes).toEqual({
      'service.namespace': 'acme',
      'service.version': '0.1.0',
      'k8s.namespace.name': 'wl-test',
      'k8s.deployment.name': `acme-worklane-${name}`,
      'k8s.pod.name': '$(K8S_POD_NAME)',
      'k8s.node.name': '$(K8S_NODE_NAME)',
    });
    // $(VAR) expands only variables declared earlier in the list.
    const declared = env.slice(0, index).map((entry) => entry.name);
    expect(declared).toEqual(expect.arrayContaining(['K8S_POD_NAME', 'K8S_NODE_NAME', 'OTEL_SERVICE_NAME']));
    expect(env.find((entry) => entry.name === 'K8S_POD_NAME').valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
  }
});

test('otel.resourceAttributes adds attributes and wins on a clash; a service image tag is its version', () => {
  const { attributes } = attributesOf(renderCi('all-enabled-values.yaml'), 'token');
  expect(attributes).toMatchObject({ 'deployment.environment.name': 'ci', 'service.namespace': 'worklane-ci', 'service.version': '0.1.1' });
});

test("OTEL_RESOURCE_ATTRIBUTES in env is refused, as it would silently replace the chart's", () => {
  expect(renderFailure({ valuesFile: 'minimal-values.yaml', set: ['env.OTEL_RESOURCE_ATTRIBUTES=a=b'] })).toContain('otel.resourceAttributes');
  expect(renderFailure({ valuesFile: 'minimal-values.yaml', set: ['issue.env.OTEL_RESOURCE_ATTRIBUTES=a=b'] })).toContain('otel.resourceAttributes');
});

test('attribute values that would break the list are refused by the schema', () => {
  expect(renderFailure({ valuesFile: 'minimal-values.yaml', set: ['otel.resourceAttributes.team=a\\,b'] })).toContain('/otel/resourceAttributes/team');
});
