// Small queries over rendered objects.
import { serviceTable } from './service-table.mjs';

/** The services of the service table, in its order; those with a database (a schema). */
export const SERVICES = serviceTable().map((service) => service.name);
export const DATABASE_SERVICES = serviceTable()
  .filter((service) => service.schema !== null)
  .map((service) => service.name);
/** The services that use NATS JetStream. */
export const NATS_SERVICES = serviceTable()
  .filter((service) => service.nats)
  .map((service) => service.name);
export const STABLE_SELECTOR_KEYS = ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/component'];

export const ofKind = (objects, kind) => objects.filter((object) => object.kind === kind);
export const component = (object) => object.metadata?.labels?.['app.kubernetes.io/component'];
export const byComponent = (objects, kind, name) => ofKind(objects, kind).find((object) => component(object) === name);

/** Pod specs of every workload (Deployments and Jobs) as { owner, spec, metadata }. */
export function podTemplates(objects) {
  return objects
    .filter((object) => ['Deployment', 'Job', 'StatefulSet', 'DaemonSet'].includes(object.kind))
    .map((object) => ({ owner: `${object.kind}/${object.metadata.name}`, kind: object.kind, ...object.spec.template }));
}

/** Every container of every workload as { owner, container, pod }. */
export function containers(objects) {
  return podTemplates(objects).flatMap((pod) =>
    [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((container) => ({
      owner: `${pod.owner}/${container.name}`,
      kind: pod.kind,
      container,
      pod,
    })),
  );
}

/** Does a matchLabels selector select these labels? */
export const selects = (matchLabels, labels) => Object.entries(matchLabels ?? {}).every(([key, value]) => labels?.[key] === value);

/** Every label selector in the objects, as { where, matchLabels }. */
export function selectors(objects) {
  const found = [];
  const add = (where, selector) => {
    if (selector) found.push({ where, matchLabels: selector.matchLabels ?? selector });
  };
  for (const object of objects) {
    const where = `${object.kind}/${object.metadata.name}`;
    switch (object.kind) {
      case 'Deployment':
        add(`${where} spec.selector`, object.spec.selector);
        for (const constraint of object.spec.template.spec.topologySpreadConstraints ?? []) {
          add(`${where} topologySpreadConstraints`, constraint.labelSelector);
        }
        break;
      case 'Service':
        add(`${where} spec.selector`, object.spec.selector);
        break;
      case 'PodDisruptionBudget':
      case 'ServiceMonitor':
        add(`${where} spec.selector`, object.spec.selector);
        break;
      case 'NetworkPolicy':
        add(`${where} spec.podSelector`, object.spec.podSelector);
        for (const rule of [...(object.spec.ingress ?? []).map((r) => r.from), ...(object.spec.egress ?? []).map((r) => r.to)]) {
          for (const peer of rule ?? []) {
            // Peers of the chart's own pods; peers supplied in values (ingress controller, databases) are the operator's.
            if (peer.podSelector?.matchLabels?.['app.kubernetes.io/component']) add(`${where} peer`, peer.podSelector);
          }
        }
        break;
      default:
    }
  }
  return found;
}

export function envOf(container) {
  return Object.fromEntries((container.env ?? []).map((entry) => [entry.name, entry]));
}
