// NetworkPolicies, enforced. The test cluster's pod network is a plain bridge, which carries
// traffic but enforces nothing; kube-router (provision/kube-router.mjs), run with its firewall
// alone (no routing, no service proxy), is its network-policy controller: it watches pods,
// namespaces and NetworkPolicies and turns them into iptables chains and ipsets. It is started in
// phase (c), once the node is registered, as a process of the run's network namespace like the
// kubelet, so every later phase runs with the chart's policies enforced. Its rules and sets are
// those of the namespace (iptables and ipset state is per network namespace) and go with it; it
// writes nothing on the machine.
//
// Phase (k), right after the install: a pod in a namespace outside the release cannot open a TCP
// connection to any port of the release's Services or pods (the token service's gRPC port among
// them), while every one of those ports answers from the node; a pod of the release that the
// policies allow (a gateway pod) reaches the token service's gRPC port and nothing its policy
// leaves out; and the controller is what blocks: with the token service's policy removed the same
// pod outside connects, with the policy back it is refused again.
//
// This module imports nothing of the cluster's own (cluster.mjs starts the controller from here):
// the release's namespace and the receiver come from the caller.
import { say } from '../../dev/src/util.mjs';
import { waitUntil } from './commands.mjs';

export const POLICY_CONTROLLER = 'kube-router';
/** kube-router's chains, jumped to from the filter table's INPUT, FORWARD and OUTPUT. */
const HOOKS = { INPUT: 'KUBE-ROUTER-INPUT', FORWARD: 'KUBE-ROUTER-FORWARD', OUTPUT: 'KUBE-ROUTER-OUTPUT' };
/** The namespace of the pod that stands for everything outside the release. */
export const OUTSIDER_NAMESPACE = 'worklane-outsider';
const OUTSIDER = 'outsider';
/** How long one TCP connection attempt may take before it counts as unanswered. */
const CONNECT_TIMEOUT_MS = 5_000;

/** The filter table's rules in the cluster's namespace (`iptables -S`). */
async function filterRules(cluster) {
  const { code, stdout, stderr } = await cluster.inNamespace('iptables', ['-w', '5', '-S']);
  if (code !== 0) throw new Error(`iptables -S failed: ${stderr}`);
  return stdout;
}

/** The hooks of kube-router's chains missing from the namespace's filter table (none once its firewall runs). */
export async function missingHooks(cluster) {
  const rules = await filterRules(cluster);
  return Object.entries(HOOKS)
    .filter(([chain, target]) => !rules.split('\n').some((line) => line.startsWith(`-A ${chain} `) && line.includes(`-j ${target}`)))
    .map(([chain, target]) => `${chain} -> ${target}`);
}

/**
 * Starts kube-router as the cluster's network-policy controller, in the namespace, and waits
 * until its chains are hooked into the filter table. Needs the node registered (it reads the
 * node's address from its Node object).
 */
export async function startPolicyController(cluster, { kubeRouter, nodeName, serviceCidr }) {
  cluster.startDaemon(
    POLICY_CONTROLLER,
    kubeRouter.bin,
    [
      `--kubeconfig=${cluster.kubeconfig}`,
      '--run-firewall=true',
      '--run-router=false',
      '--run-service-proxy=false',
      '--run-loadbalancer=false',
      `--hostname-override=${nodeName}`,
      `--service-cluster-ip-range=${serviceCidr}`,
      '--enable-ipv4=true',
      '--enable-ipv6=false',
      '--metrics-port=0',
      '--v=1',
    ],
    // It runs ipset and iptables by name.
    { env: { ...process.env, PATH: kubeRouter.path, NODE_NAME: nodeName } },
  );
  await waitUntil(
    `${POLICY_CONTROLLER} hooks its chains into the namespace's filter table`,
    async () => {
      if (!cluster.processes.alive(POLICY_CONTROLLER)) throw new Error(`${POLICY_CONTROLLER} exited:\n${cluster.processes.tail(POLICY_CONTROLLER)}`);
      const missing = await missingHooks(cluster);
      return missing.length === 0 ? true : `missing ${missing.join(', ')}`;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/** What of kube-router's state is on the machine itself (its chains or ipsets outside the namespace): [] when nothing. */
export async function controllerStateOnMachine(run) {
  const found = [];
  const rules = await run('iptables', ['-w', '5', '-S']);
  for (const line of rules.stdout.split('\n')) if (/KUBE-ROUTER|KUBE-POD-FW|KUBE-NWPLCY/.test(line)) found.push(`iptables: ${line}`);
  const sets = await run('ipset', ['list', '-n']);
  for (const name of sets.stdout.split('\n')) if (/^KUBE-/.test(name)) found.push(`ipset: ${name}`);
  return found;
}

/** One TCP connection attempt per target ({host, port}), all at once; prints each outcome: connected, refused, timeout or an error code. */
const CONNECT_PROBE = `
const net = require('node:net');
const [targets, timeoutMs] = process.argv.slice(1);
const attempt = ({ host, port }) => new Promise((resolve) => {
  const socket = net.connect({ host, port: Number(port) });
  const done = (outcome) => { socket.destroy(); resolve(outcome); };
  socket.setTimeout(Number(timeoutMs), () => done('timeout'));
  socket.on('connect', () => done('connected'));
  socket.on('error', (error) => done(error.code === 'ECONNREFUSED' ? 'refused' : error.code || error.message));
});
Promise.all(JSON.parse(targets).map(attempt)).then((outcomes) => process.stdout.write(JSON.stringify(outcomes)));
`;

const probeArgs = (targets) => ['-e', CONNECT_PROBE, JSON.stringify(targets.map(({ host, port }) => ({ host, port }))), String(CONNECT_TIMEOUT_MS)];

function outcomesOf(targets, { code, stdout, stderr }, where) {
  let outcomes;
  try {
    outcomes = JSON.parse(stdout);
  } catch {
    throw new Error(`the probe from ${where} did not run (exit ${code}): ${stdout}${stderr}`);
  }
  return targets.map((target, i) => ({ ...target, outcome: outcomes[i] }));
}

/** Connection attempts from inside a pod (`kubectl exec`): [{...target, outcome}]. */
async function probeFromPod(cluster, namespace, pod, targets) {
  const result = await cluster.kubectl(['exec', '-n', namespace, pod, '--', 'node', ...probeArgs(targets)]);
  return outcomesOf(targets, result, `pod ${namespace}/${pod}`);
}

/** Connection attempts from the node (the cluster's namespace itself, as the kubelet's probes come). */
async function probeFromNode(cluster, targets) {
  const result = await cluster.inNamespace(process.execPath, probeArgs(targets));
  return outcomesOf(targets, result, 'the node');
}

const blocked = (outcome) => outcome === 'refused' || outcome === 'timeout';
const describe = (results) => results.map((r) => `${r.name} (${r.host}:${r.port}): ${r.outcome}`).join('; ');

async function getJson(cluster, args) {
  const { code, stdout, stderr } = await cluster.kubectl([...args, '-o', 'json']);
  if (code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${stderr}`);
  return JSON.parse(stdout);
}

/** Every port of the release: each Service's ports at its address, and each Deployment pod's container ports at the pod's address (one pod per component). */
async function releaseTargets(cluster, namespace) {
  const services = (await getJson(cluster, ['get', 'services', '-n', namespace])).items.filter((s) => s.spec.clusterIP && s.spec.clusterIP !== 'None');
  const pods = (await getJson(cluster, ['get', 'pods', '-n', namespace])).items.filter(
    (p) => p.status.phase === 'Running' && p.status.podIP && !p.metadata.deletionTimestamp && !(p.metadata.ownerReferences ?? []).some((o) => o.kind === 'Job'),
  );
  const targets = [];
  for (const service of services) {
    for (const port of service.spec.ports.filter((p) => (p.protocol ?? 'TCP') === 'TCP')) {
      targets.push({ name: `Service ${service.metadata.name} ${port.name ?? port.port}`, host: service.spec.clusterIP, port: port.port });
    }
  }
  const seen = new Set();
  for (const pod of pods) {
    const component = pod.metadata.labels?.['app.kubernetes.io/component'];
    if (!component || seen.has(component)) continue;
    seen.add(component);
    for (const container of pod.spec.containers) {
      for (const port of (container.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === 'TCP')) {
        targets.push({ name: `pod ${pod.metadata.name} ${port.name ?? port.containerPort}`, host: pod.status.podIP, port: port.containerPort, component, portName: port.name });
      }
    }
  }
  return { targets, pods, services };
}

/** The outsider: a pod in a namespace of its own, with no label any policy selects, idling until exec'd into. */
function outsiderManifest(image) {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OUTSIDER_NAMESPACE } },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: OUTSIDER, namespace: OUTSIDER_NAMESPACE, labels: { app: OUTSIDER } },
        spec: {
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 1,
          securityContext: { runAsNonRoot: true, runAsUser: 1000 },
          containers: [
            {
              name: OUTSIDER,
              image,
              imagePullPolicy: 'Never',
              command: ['node', '-e', 'setInterval(() => {}, 60_000)'],
              resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            },
          ],
        },
      },
    ],
  };
}

/** The NetworkPolicy of one component of the release, as an object that can be created again. */
async function componentPolicy(cluster, namespace, component) {
  const list = await getJson(cluster, ['get', 'networkpolicies', '-n', namespace, '-l', `app.kubernetes.io/component=${component}`]);
  if (list.items.length !== 1) throw new Error(`expected one NetworkPolicy for ${component}, found ${list.items.length}`);
  const policy = list.items[0];
  for (const field of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields']) delete policy.metadata[field];
  delete policy.status;
  return policy;
}

/**
 * Phase (k). `image`: an image with node in it (the gateway's); `releaseNamespace`: the release's;
 * `receiver`: {namespace, name, port} of a pod no policy selects (the test's webhook receiver).
 */
export async function runNetworkPolicy(suite, cluster, { image, releaseNamespace, receiver }) {
  const created = await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(outsiderManifest(image)) });
  if (created.code !== 0) throw new Error(`could not create the outsider pod: ${created.stderr}`);
  try {
    await waitUntil(
      `pod ${OUTSIDER_NAMESPACE}/${OUTSIDER} is Ready`,
      async () => {
        const { stdout } = await cluster.kubectl(['get', 'pod', '-n', OUTSIDER_NAMESPACE, OUTSIDER, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']);
        return stdout.trim() === 'True' ? true : stdout || 'not yet';
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await checks(suite, cluster, releaseNamespace, receiver);
  } finally {
    await cluster.kubectl(['delete', 'namespace', OUTSIDER_NAMESPACE, '--wait=false']);
  }
}

async function checks(suite, cluster, releaseNamespace, receiverPod) {
  const { targets, pods } = await releaseTargets(cluster, releaseNamespace);
  const token = targets.filter((t) => t.component === 'token' && t.portName === 'grpc');
  if (token.length !== 1) throw new Error(`no gRPC port on a token pod among ${describe(targets)}`);
  const tokenService = targets.find((t) => t.name.startsWith('Service ') && t.name.endsWith('-token grpc'));
  if (!tokenService) throw new Error(`no token Service with a grpc port among ${targets.map((t) => t.name).join(', ')}`);
  const { stdout: receiverIp } = await cluster.kubectl(['get', 'pod', '-n', receiverPod.namespace, receiverPod.name, '-o', 'jsonpath={.status.podIP}']);
  const receiver = { name: `pod ${receiverPod.namespace}/${receiverPod.name} (no policy selects it)`, host: receiverIp.trim(), port: receiverPod.port };

  await suite.check(`${POLICY_CONTROLLER} has a firewall chain for every pod of the release, and its hooks in INPUT, FORWARD and OUTPUT`, async () => {
    const missing = await missingHooks(cluster);
    if (missing.length > 0) throw new Error(`missing hooks: ${missing.join(', ')}`);
    const rules = await filterRules(cluster);
    const without = pods.map((p) => p.metadata.name).filter((name) => !rules.includes(`name:${name} namespace: ${releaseNamespace}`));
    if (without.length > 0) throw new Error(`no firewall chain for ${without.join(', ')}`);
  });

  await suite.check(`every port of the release's Services and pods answers from the node (${targets.length} ports: the policies let the kubelet's probes through)`, async () => {
    const results = await probeFromNode(cluster, targets);
    const failed = results.filter((r) => r.outcome !== 'connected');
    if (failed.length > 0) throw new Error(describe(failed));
  });

  await suite.check(
    `a pod outside the release (namespace ${OUTSIDER_NAMESPACE}) reaches a pod no policy selects, and none of the release's ${targets.length} ports: the token service's gRPC port, the other internal services', the public ones`,
    async () => {
      const results = await probeFromPod(cluster, OUTSIDER_NAMESPACE, OUTSIDER, [receiver, ...targets]);
      const [control, ...release] = results;
      if (control.outcome !== 'connected') throw new Error(`its own network does not work: ${describe([control])}`);
      const open = release.filter((r) => !blocked(r.outcome));
      if (open.length > 0) throw new Error(`reached: ${describe(open)}`);
      say(`  from ${OUTSIDER_NAMESPACE}/${OUTSIDER}: ${release.length} ports of the release ${[...new Set(release.map((r) => r.outcome))].join('/')}`);
    },
  );

  await suite.check(
    "a gateway pod (allowed by the token service's policy) reaches the token service's gRPC port, through its Service and at its pod, and not what its own policy leaves out",
    async () => {
      const gateway = pods.find((p) => p.metadata.labels?.['app.kubernetes.io/component'] === 'gateway');
      if (!gateway) throw new Error('no gateway pod');
      const tokenHttp = targets.find((t) => t.component === 'token' && t.portName === 'http');
      const denied = [
        { ...receiver, name: `${receiver.name}: the gateway's policy allows no such egress` },
        ...(tokenHttp ? [{ ...tokenHttp, name: `${tokenHttp.name} (only gRPC is allowed from the gateway)` }] : []),
      ];
      const results = await probeFromPod(cluster, releaseNamespace, gateway.metadata.name, [tokenService, ...token, ...denied]);
      const allowed = results.slice(0, 2).filter((r) => r.outcome !== 'connected');
      if (allowed.length > 0) throw new Error(`not reached: ${describe(allowed)}`);
      const open = results.slice(2).filter((r) => !blocked(r.outcome));
      if (open.length > 0) throw new Error(`reached: ${describe(open)}`);
    },
  );

  await suite.check(
    `the blocking is ${POLICY_CONTROLLER}'s: with the token service's NetworkPolicy removed the pod outside connects to its gRPC port, with the policy back it is refused again`,
    async () => {
      const policy = await componentPolicy(cluster, releaseNamespace, 'token');
      const probe = async () => (await probeFromPod(cluster, OUTSIDER_NAMESPACE, OUTSIDER, [tokenService]))[0].outcome;
      const removed = await cluster.kubectl(['delete', 'networkpolicy', '-n', releaseNamespace, policy.metadata.name]);
      if (removed.code !== 0) throw new Error(`could not remove ${policy.metadata.name}: ${removed.stderr}`);
      // Put back whatever happens: every later phase runs with the release's policies.
      const opened = await waitUntil('the pod outside connects once the policy is removed', async () => (await probe()) === 'connected' || 'still blocked', {
        timeoutMs: 60_000,
        intervalMs: 500,
      }).then(
        () => null,
        (error) => error,
      );
      const restored = await cluster.kubectl(['create', '-f', '-'], { input: JSON.stringify(policy) });
      if (restored.code !== 0) throw new Error(`could not restore ${policy.metadata.name}: ${restored.stderr}`);
      if (opened) throw opened;
      await waitUntil('the pod outside is refused once the policy is back', async () => blocked(await probe()) || 'still connects', { timeoutMs: 60_000, intervalMs: 500 });
    },
  );
}
