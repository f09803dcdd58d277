// The cluster phases of `npm run test:kubernetes` (as root; WORKLANE_K8S_CLUSTER=0 leaves them out): (b) images, (c) the
// cluster in its network namespace (kube-router enforcing NetworkPolicies from then on), (e) the
// release installed with the chart's defaults (and the test's HTTPS webhook receiver), (k) the
// NetworkPolicies checked from a pod outside the release and one inside it, (f) the API conformance suite through the gateway's Service,
// (g) a rolling upgrade under load and its rollback, (h) faults under load. Each is
// timed by the suite; a phase that cannot run because an earlier one failed is skipped with one
// failed check saying why.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { userCacheDir } from '../../dev/src/provision/cache.mjs';
import { say } from '../../dev/src/util.mjs';
import { DNS_IP, NODE_IP, startCluster } from './cluster.mjs';
import { waitUntil } from './commands.mjs';
import { buildDataImages } from './data-images.mjs';
import { DATA_NAMESPACE, STREAMS, psqlThroughService, startDataServices, streamReplicated } from './data-services.mjs';
import { buildServiceImages } from './images.mjs';
import { RECEIVER_NAME, RECEIVER_NAMESPACE, RECEIVER_PORT, startReceiver } from './receiver.mjs';
import { RELEASE_NAMESPACE, environmentValues, installRelease, testRelease, waitForReleaseReady } from './release.mjs';

/** A pod that resolves a Service by name through the cluster DNS and connects to it, from one of the service images. */
function dnsProbePod(image) {
  const script = [
    "const dns = require('node:dns').promises;",
    "const net = require('node:net');",
    '(async () => {',
    "  const { address } = await dns.lookup('kubernetes.default.svc.cluster.local');",
    '  await new Promise((resolve, reject) => {',
    '    const socket = net.connect({ host: address, port: 443, timeout: 5000 }, () => { socket.end(); resolve(); });',
    "    socket.on('error', reject);",
    "    socket.on('timeout', () => reject(new Error('timeout')));",
    '  });',
    "  console.log('reached', address);",
    '})().catch((error) => { console.error(error.message); process.exit(1); });',
  ].join('\n');
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'dns-probe', namespace: 'default' },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 1000 },
      containers: [{ name: 'probe', image, imagePullPolicy: 'Never', command: ['node', '-e', script], resources: { requests: { cpu: '10m', memory: '32Mi' } } }],
    },
  });
}

async function waitForPodPhase(cluster, namespace, name, phases, timeoutMs) {
  let phase = '';
  await waitUntil(
    `pod ${namespace}/${name} finishes`,
    async () => {
      const { stdout } = await cluster.kubectl(['get', 'pod', '-n', namespace, name, '-o', 'jsonpath={.status.phase}']);
      phase = stdout.trim();
      return phases.includes(phase) ? true : phase || 'no phase yet';
    },
    { timeoutMs, intervalMs: 500 },
  );
  return phase;
}

/**
 * Whether a phase after the install runs: all of them unless WORKLANE_K8S_PHASES names some
 * (`WORKLANE_K8S_PHASES=f,h`), for working on one phase without waiting for the others.
 */
export function phaseSelected(letter) {
  const chosen = (process.env.WORKLANE_K8S_PHASES ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  return chosen.length === 0 || chosen.includes(letter);
}

export async function runClusterPhases({ suite, tools, processes, workDir, onCluster }) {
  const buildah = tools.buildah;
  let images = null;
  let dataImages = null;
  await suite.phase('(b) service, PostgreSQL and NATS images with buildah', async () => {
    const result = await buildServiceImages({ buildah, baseImage: tools.nodeBaseImage.name, workDir, log: (line) => say(`  ${line}`) });
    images = result;
    await suite.check(`every service image is in buildah's storage (${Object.keys(result.images).length} services, tag ${result.tag})`, async () => {
      const { run } = await import('../../dev/src/util.mjs');
      for (const name of Object.values(result.images)) {
        const { code, stderr } = await run(buildah.bin, ['inspect', '--type', 'image', name], { env: buildah.env });
        if (code !== 0) throw new Error(`${name}: ${stderr}`);
      }
    });
    await suite.check('the PostgreSQL and NATS images are built (Debian packages, nats-server from the Go module proxy)', async () => {
      dataImages = (await buildDataImages({ buildah, natsServer: tools.natsServer, workDir, log: (line) => say(`  ${line}`) })).images;
    });
  });
  if (!images || !dataImages) {
    suite.fail('(c) and (e) skipped: no images');
    return;
  }

  let cluster = null;
  await suite.phase('(c) single-node Kubernetes in its own network namespace', async () => {
    const handle = await startCluster({
      processes,
      workDir,
      suite,
      buildah,
      serviceImages: { ...images.images, ...dataImages },
      tools: {
        cacheDir: userCacheDir(),
        kubectl: tools.kubernetes.bins.kubectl,
        helm: tools.helm.bin,
        etcd: tools.etcd.bin,
        runtime: tools.nodeRuntime,
        kubernetes: { ...tools.kubernetes.bins, ...tools.kubernetesNode.bins },
        kubeRouter: tools.kubeRouter,
        version: tools.kubernetes.version,
      },
      programs: { pause: tools.pause, coredns: tools.coredns },
      log: (line) => say(`  ${line}`),
      onStarted: onCluster,
    });
    cluster = handle;
    await suite.check('CoreDNS is Ready as kube-system/kube-dns', async () => {
      const { stdout } = await handle.kubectl(['get', 'service', '-n', 'kube-system', 'kube-dns', '-o', 'jsonpath={.spec.clusterIP}']);
      if (stdout.trim() !== DNS_IP) throw new Error(`kube-dns has address ${stdout}`);
    });
    await suite.check('a pod resolves a Service by name through the cluster DNS and connects to it', async () => {
      const created = await handle.kubectl(['apply', '-f', '-'], { input: dnsProbePod(Object.values(images.images)[0]) });
      if (created.code !== 0) throw new Error(created.stderr);
      const phase = await waitForPodPhase(handle, 'default', 'dns-probe', ['Succeeded', 'Failed'], 120_000);
      const logs = await handle.kubectl(['logs', '-n', 'default', 'dns-probe']);
      await handle.kubectl(['delete', 'pod', '-n', 'default', 'dns-probe', '--wait=false']);
      if (phase !== 'Succeeded') throw new Error(`the pod ${phase}: ${logs.stdout}${logs.stderr}`);
    });
    await suite.check(`the cluster's addresses exist only in its namespace (no ${NODE_IP}, no pod address, no cni0 on the machine)`, async () => {
      const { run } = await import('../../dev/src/util.mjs');
      const { stdout } = await run('ip', ['-o', 'addr', 'show']);
      const leaked = stdout.split('\n').filter((line) => line.includes(` ${NODE_IP}/`) || / 10\.244\./.test(line) || /^\d+: cni0 /.test(line));
      if (leaked.length > 0) throw new Error(`on the machine: ${leaked.join('; ')}`);
      const route = await run('ip', ['route', 'get', NODE_IP]);
      if (/ dev (lo|cni0) /.test(route.stdout)) throw new Error(`the machine routes ${NODE_IP} locally: ${route.stdout}`);
    });
    const enforced = `NetworkPolicies are enforced from here on: kube-router ${tools.kubeRouter.version}'s firewall is hooked into the namespace's filter table`;
    await suite.check(`${enforced}, and none of its chains or ipsets is on the machine`, async () => {
      const { controllerStateOnMachine, missingHooks } = await import('./network-policy.mjs');
      const missing = await missingHooks(handle);
      if (missing.length > 0) throw new Error(`missing hooks: ${missing.join(', ')}`);
      const { run } = await import('../../dev/src/util.mjs');
      const onMachine = await controllerStateOnMachine(run);
      if (onMachine.length > 0) throw new Error(`on the machine: ${onMachine.join('; ')}`);
    });
  });
  if (!cluster) {
    suite.fail('(e) skipped: no cluster');
    return;
  }

  let receiver = null;
  let ready = false;
  await suite.phase('(e) helm install with the default values, every pod Ready, helm test', async () => {
    await startDataServices(cluster, { images: dataImages, workDir, releaseNamespace: RELEASE_NAMESPACE });
    await suite.check(
      `PostgreSQL (a pod of a StatefulSet in ${DATA_NAMESPACE}, its data on a local volume) takes the run's password through its Service and refuses another`,
      async () => {
        const good = await psqlThroughService(cluster, 'SELECT 1');
        if (good.code !== 0 || good.output !== '1') throw new Error(`with the run's password: exit ${good.code}: ${good.output}`);
        const bad = await psqlThroughService(cluster, 'SELECT 1', randomBytes(12).toString('hex'));
        if (bad.code === 0 || !/password authentication failed/.test(bad.output)) throw new Error(`another password was not refused: exit ${bad.code}: ${bad.output}`);
      },
    );
    receiver = await startReceiver(cluster, { image: images.images.gateway, workDir, releaseNamespace: RELEASE_NAMESPACE });
    let installed = false;
    await suite.check("helm install succeeds with the default values plus the environment's (images, PostgreSQL, NATS, the test receiver)", async () => {
      await installRelease(cluster, { tag: images.tag });
      installed = true;
    });
    if (!installed) return;
    await suite.check('every Deployment of the release rolls out and every pod is Ready', async () => {
      const { deployments, pods } = await waitForReleaseReady(cluster);
      say(`  ${deployments.length} Deployments, ${pods.length} pods Ready in namespace ${RELEASE_NAMESPACE}`);
      ready = true;
    });
    await suite.check(`the services' streams (${STREAMS.join(', ')}) have 3 replicas on the 3 NATS servers, a leader and both other replicas current`, async () => {
      for (const stream of STREAMS) {
        await waitUntil(`${stream} has 3 replicas current`, () => streamReplicated(cluster, stream), { timeoutMs: 60_000, intervalMs: 500 });
      }
    });
    await suite.check('helm test passes', async () => {
      const output = await testRelease(cluster);
      fs.writeFileSync(path.join(workDir, 'helm-test.log'), output);
    });
  });
  if (!ready) {
    suite.fail('(f) skipped: the release is not Ready');
    return;
  }

  if (phaseSelected('k')) {
    await suite.phase('(k) NetworkPolicies enforced: a pod outside the release cannot reach the token service', async () => {
      const { runNetworkPolicy } = await import('./network-policy.mjs');
      const receiverPod = { namespace: RECEIVER_NAMESPACE, name: RECEIVER_NAME, port: RECEIVER_PORT };
      await runNetworkPolicy(suite, cluster, { image: images.images.gateway, releaseNamespace: RELEASE_NAMESPACE, receiver: receiverPod });
    });
  }

  if (phaseSelected('f')) {
    await suite.phase('(f) API conformance suite through the gateway Service, an event to the HTTPS receiver', async () => {
      const { runConformance } = await import('./conformance.mjs');
      await runConformance(suite, cluster, { receiver, workDir, environment: environmentValues(images.tag) });
    });
  }

  if (phaseSelected('g')) {
    await suite.phase('(g) rolling upgrade under load to a tag with an expand migration, then helm rollback', async () => {
      const { runUpgrade } = await import('./upgrade.mjs');
      await runUpgrade(suite, cluster, { receiver, workDir, buildah, images });
    });
  }

  if (phaseSelected('h') && process.env.WORKLANE_K8S_FAULTS !== '0') {
    await suite.phase('(h) faults under load: a pod of each service, a NATS server, PostgreSQL', async () => {
      const { runFaults } = await import('./faults.mjs');
      await runFaults(suite, cluster, { receiver, workDir });
    });
  }

  // Last: it leaves the release exporting its traces to the collector.
  if (phaseSelected('j')) {
    await suite.phase('(j) one trace: an API call through NATS to the outbound POST, in an in-cluster OTLP receiver', async () => {
      const { runTrace } = await import('./trace.mjs');
      await runTrace(suite, cluster, { receiver, workDir, buildah, collector: tools.otelCollector, images, environment: environmentValues(images.tag) });
    });
  }
}
