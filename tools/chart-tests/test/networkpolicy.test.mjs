import { isIP } from 'node:net';
import { render, renderCi, renderFailure, valueSets } from '../src/helm.mjs';
import { DATABASE_SERVICES, NATS_SERVICES, SERVICES, byComponent, component, ofKind, selects } from '../src/objects.mjs';

const PRIVATE_IPV4 = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10', '127.0.0.0/8'];
const PRIVATE_IPV6 = ['::1/128', 'fc00::/7', 'fe80::/10'];

const objects = renderCi('production-values.yaml');
const policies = ofKind(objects, 'NetworkPolicy');
const policyOf = (name) => byComponent(objects, 'NetworkPolicy', name);
const peerComponents = (peers) =>
  (peers ?? [])
    .map((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/component'])
    .filter(Boolean)
    .sort();
const ipBlocks = (policy) => policy.spec.egress.flatMap((rule) => (rule.to ?? []).filter((peer) => peer.ipBlock).map((peer) => peer.ipBlock));

test('every pod of the chart is selected by exactly one NetworkPolicy restricting both directions', () => {
  const pods = [...ofKind(objects, 'Deployment'), ...ofKind(objects, 'Job')].map((w) => w.spec.template.metadata.labels);
  for (const labels of pods) {
    const matching = policies.filter((p) => selects(p.spec.podSelector.matchLabels, labels));
    expect(matching).toHaveLength(1);
    expect(matching[0].spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
  }
});

test('only the ingress controller reaches the gateway and the console from outside the release', () => {
  for (const name of SERVICES) {
    const external = policyOf(name).spec.ingress.filter((rule) => rule.from.some((peer) => peer.namespaceSelector || peer.ipBlock));
    const controller = external.filter((rule) => rule.from.some((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'ingress-nginx'));
    const scrapers = external.filter((rule) => rule.from.some((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'prometheus'));
    expect(controller).toHaveLength(['gateway', 'console'].includes(name) ? 1 : 0);
    // Anything else from outside is Prometheus, on the metrics (http) port only.
    expect(external.length).toBe(controller.length + scrapers.length);
    for (const rule of scrapers) expect(rule.ports).toEqual([{ port: 'metrics', protocol: 'TCP' }]);
  }
});

test.each([
  ['token', { grpc: ['console', 'gateway', 'issue'] }],
  ['project', { http: ['console', 'gateway'], grpc: ['issue'] }],
  ['webhook', { http: ['console', 'gateway'], grpc: ['delivery'] }],
  ['issue', { http: ['console', 'gateway'] }],
  ['delivery', { http: ['console', 'gateway'] }],
  ['console', { http: ['gateway'] }],
  // The gateway: only the release's `helm test` pod, besides the ingress controller (from outside the release).
  ['gateway', { http: ['test'] }],
])('inside the release, %s accepts only its callers', (name, expected) => {
  const rules = policyOf(name).spec.ingress.filter((rule) => rule.from.every((peer) => !peer.namespaceSelector));
  const actual = {};
  for (const rule of rules) {
    for (const { port } of rule.ports) actual[port] = [...(actual[port] ?? []), ...peerComponents(rule.from)].sort();
  }
  expect(actual).toEqual(expected);
});

test('services send only to the services they call, on their ports', () => {
  const calls = Object.fromEntries(
    policies
      .filter((p) => SERVICES.includes(component(p)))
      .map((p) => [component(p), p.spec.egress.flatMap((rule) => peerComponents(rule.to).map((target) => `${target}:${rule.ports[0].port}`)).sort()]),
  );
  // A service not listed calls no other service.
  const expected = Object.fromEntries(SERVICES.map((name) => [name, []]));
  expect(calls).toEqual({
    ...expected,
    gateway: ['console:8085', 'delivery:8084', 'issue:8083', 'project:8081', 'token:7001', 'webhook:8082'],
    console: ['delivery:8084', 'issue:8083', 'project:8081', 'token:7001', 'webhook:8082'],
    token: [],
    project: [],
    webhook: [],
    issue: ['project:7002', 'token:7001'],
    delivery: ['webhook:7003'],
  });
});

test('delivery may reach the internet but no private, loopback, link-local or CGNAT range, in IPv4 and IPv6', () => {
  const blocks = ipBlocks(policyOf('delivery'));
  const v4 = blocks.find((block) => block.cidr === '0.0.0.0/0');
  const v6 = blocks.find((block) => block.cidr === '::/0');
  expect(v4.except).toEqual(expect.arrayContaining(PRIVATE_IPV4));
  expect(v6.except).toEqual(expect.arrayContaining(PRIVATE_IPV6));
});

/** An address as a BigInt with its bit width; IPv4-mapped IPv6 counts as IPv4, as Kubernetes reads it. */
function parseAddress(text) {
  const mapped = text.match(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i);
  if (isIP(text) === 4 || mapped) {
    const octets = (mapped ? mapped[1] : text).split('.').map(Number);
    return { bits: 32, value: octets.reduce((acc, octet) => (acc << 8n) | BigInt(octet), 0n), mapped: Boolean(mapped) };
  }
  const [head, tail = ''] = text.split('::');
  const groups = (part) => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = [...groups(head), ...Array(text.includes('::') ? missing : 0).fill('0'), ...groups(tail)];
  const value = all.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
  // ::ffff:0:0/96 written in hexadecimal groups is IPv4-mapped too.
  return { bits: 128, value, mapped: value >> 32n === 0xffffn };
}

function parseCidr(cidr) {
  const [address, prefix] = cidr.split('/');
  return { ...parseAddress(address), prefix: Number(prefix) };
}

/** Is `inner` a strict subset of `outer`, in the same address family? */
function strictlyInside(inner, outer) {
  const a = parseCidr(inner);
  const b = parseCidr(outer);
  if (a.mapped || b.mapped || a.bits !== b.bits || a.prefix <= b.prefix) return false;
  const shift = BigInt(b.bits - b.prefix);
  return a.value >> shift === b.value >> shift;
}

test.each(valueSets)('with %s every ipBlock except lies strictly inside its cidr, as the API server requires', (valueSet) => {
  for (const policy of ofKind(renderCi(valueSet), 'NetworkPolicy')) {
    for (const block of ipBlocks(policy)) {
      const outside = (block.except ?? []).filter((except) => !strictlyInside(except, block.cidr));
      expect({ policy: policy.metadata.name, cidr: block.cidr, outside }).toEqual({ policy: policy.metadata.name, cidr: block.cidr, outside: [] });
    }
  }
});

test('an IPv4-mapped IPv6 range in internetEgress.except is refused with a message saying what to do', () => {
  const message = renderFailure({ valuesFile: 'minimal-values.yaml', set: ['networkPolicy.internetEgress.except={10.0.0.0/8,::ffff:0:0/96}'] });
  expect(message).toContain('::ffff:0:0/96 is an IPv4-mapped IPv6 range');
  expect(message).toContain('list the IPv4 range instead');
});

test('no other service can reach the internet, and no egress rule is open to every destination and port', () => {
  for (const policy of policies) {
    if (component(policy) !== 'delivery') expect(ipBlocks(policy)).toEqual([]);
    for (const rule of policy.spec.egress) {
      expect(Boolean(rule.to?.length) || Boolean(rule.ports?.length)).toBe(true);
    }
  }
});

test('every pod may resolve DNS, and databases and NATS are reached only by the services that use them', () => {
  for (const policy of policies) {
    const ports = policy.spec.egress.flatMap((rule) => rule.ports ?? []).map((p) => `${p.port}/${p.protocol}`);
    expect(ports).toEqual(expect.arrayContaining(['53/UDP', '53/TCP']));
    const name = component(policy);
    expect(ports.includes('5432/TCP')).toBe([...DATABASE_SERVICES, 'migrate'].includes(name));
    expect(ports.includes('4222/TCP')).toBe(NATS_SERVICES.includes(name));
  }
});

test('webhookAllowedCidrs are added to the delivery egress, and internet egress can be limited to ports', () => {
  const rendered = render({ valuesFile: 'all-enabled-values.yaml' });
  const delivery = byComponent(rendered, 'NetworkPolicy', 'delivery');
  const rule = delivery.spec.egress.find((r) => (r.to ?? []).some((peer) => peer.ipBlock?.cidr === '0.0.0.0/0'));
  expect(rule.to.map((peer) => peer.ipBlock.cidr)).toEqual(['0.0.0.0/0', '::/0', '10.20.0.0/16', 'fd00:20::/64']);
  expect(rule.ports).toEqual([
    { port: 443, protocol: 'TCP' },
    { port: 8443, protocol: 'TCP' },
  ]);
});

test('networkPolicy.enabled=false renders no NetworkPolicy', () => {
  expect(ofKind(render({ valuesFile: 'minimal-values.yaml', set: ['networkPolicy.enabled=false'] }), 'NetworkPolicy')).toEqual([]);
});
