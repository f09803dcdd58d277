// Phase (c): a real single-node Kubernetes, entirely inside a network namespace the run creates.
//
// Every daemon (containerd, etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
// kubelet, kube-proxy, and kube-router as the network-policy controller) is started with
// `nsenter --net=<namespace>` (nsenter execs it, so the pid the suite holds is the daemon's own)
// and shares the machine's mount and process namespaces
// (containerd must see the kubelet's volume mounts and the cgroup file system). They bind the
// node address, which exists only in that namespace, and the namespace has no route out of the
// machine: the node, pod and service addresses are unreachable from outside, and nothing in the
// cluster reaches anything but the namespace. kubectl and helm run in the namespace the same way.
//
// Images come only from containerd's own store (imported with `ctr images import`, never pulled):
// the pods' sandbox (pause) and CoreDNS images are built here from static binaries
// (provision/cluster-programs.mjs), the service images by phase (b). containerd's root directory
// is kept in the user cache between runs, so images imported once are there the next time; a
// root left by a run that did not finish cleanly is emptied first.
import fs from 'node:fs';
import path from 'node:path';

import { run, say } from '../../dev/src/util.mjs';
import { coreDnsManifest } from './addons.mjs';
import { retrySetUp, runLogged, runLoggedChecked, waitUntil } from './commands.mjs';
import { CGROUP_ROOT, createCgroupRoot, createNamespace, namespaceRoutes, netnsPath, recordHostSettings, recordState, snapshotFixedPaths, unmountUnder } from './host.mjs';
import { exportImage } from './images.mjs';
import { startPolicyController } from './network-policy.mjs';
import { makePki, writeKubeconfig } from './pki.mjs';

export const NODE_NAME = 'worklane-node';
/** The node's address: on the namespace's loopback only. */
export const NODE_IP = '10.250.0.1';
export const POD_CIDR = '10.244.0.0/24';
export const CLUSTER_CIDR = '10.244.0.0/16';
export const SERVICE_CIDR = '10.96.0.0/16';
export const DNS_IP = '10.96.0.10';
const CNI_NETWORK = 'worklane-k8s';

/** Images the cluster itself runs, built from static binaries (tagged by what they were built from). */
export const clusterImages = (programs) => ({
  pause: { name: `localhost/worklane-test/pause:${programs.pause.version}`, bin: programs.pause.bin, path: '/pause' },
  coredns: {
    name: `localhost/worklane-test/coredns:${programs.coredns.version}-${path.basename(programs.coredns.bin).split('-').pop()}`,
    bin: programs.coredns.bin,
    path: '/coredns',
  },
});

function write(file, text, mode = 0o644) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text, { mode });
  return file;
}

/** An HTTP(S) GET run inside the namespace (the suite itself lives outside it): resolves {status, body}. */
const PROBE = `
const [url, ca, cert, key] = process.argv.slice(1);
const fs = require('node:fs');
const mod = require(url.startsWith('https:') ? 'node:https' : 'node:http');
const tls = ca ? { ca: fs.readFileSync(ca), cert: fs.readFileSync(cert), key: fs.readFileSync(key) } : {};
const request = mod.get(url, { ...tls, timeout: 3000 }, (res) => {
  let body = '';
  res.on('data', (d) => (body += d));
  res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, body })));
});
request.on('timeout', () => request.destroy(new Error('timeout')));
request.on('error', (e) => process.stdout.write(JSON.stringify({ status: 0, body: e.message })));
`;

/** One DNS query (A record) to a given server, run inside the namespace: exits 0 when it answers with an address. */
const DNS_QUERY = `
const [server, name] = process.argv.slice(1);
const resolver = new (require('node:dns').promises.Resolver)({ timeout: 2000, tries: 1 });
resolver.setServers([server]);
resolver.resolve4(name).then((a) => console.log(a.join(' ')), (e) => { console.error(e.code || e.message); process.exit(1); });
`;

/** containerd's configuration: its own root, state and socket; runc with cgroupfs; the CNI config of this run; the local pause image. */
function containerdConfig({ root, state, socket, cniConfDir, cniBinDir, runc, pauseImage }) {
  return `version = 2
root = "${root}"
state = "${state}"
disabled_plugins = ["io.containerd.internal.v1.tracing", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${socket}"

[ttrpc]
  address = "${socket}.ttrpc"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "${root}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseImage}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  max_container_log_line_size = 16384
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "${runc}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${cniBinDir}"
    conf_dir = "${cniConfDir}"
`;
}

/** The pod network: one bridge in the namespace, addresses from the node's pod range, hairpin for a pod reaching itself through a Service. */
const cniConfig = (ipamDir) =>
  JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: CNI_NETWORK,
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', dataDir: ipamDir, ranges: [[{ subnet: POD_CIDR }]], routes: [{ dst: '0.0.0.0/0' }] },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );

function kubeletConfig({ pki, socket, resolvConf, podLogsDir, volumePluginDir }) {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_IP}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: ${pki.ca}
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
cgroupRoot: /${CGROUP_ROOT}
cgroupsPerQOS: true
failSwapOn: false
containerRuntimeEndpoint: unix://${socket}
imageServiceEndpoint: unix://${socket}
clusterDomain: cluster.local
clusterDNS:
  - ${DNS_IP}
resolvConf: ${resolvConf}
podCIDR: ${POD_CIDR}
podLogsDir: ${podLogsDir}
volumePluginDir: ${volumePluginDir}
# Images are imported, never pulled, and must never be collected.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
evictionPressureTransitionPeriod: 10s
maxPods: 110
rotateCertificates: false
serverTLSBootstrap: false
registerNode: true
protectKernelDefaults: false
shutdownGracePeriod: 0s
nodeStatusReportFrequency: 10s
`;
}

function kubeProxyConfig({ kubeconfig }) {
  // conntrack: 0 leaves the host-wide conntrack table size and timeouts alone.
  return `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${kubeconfig}
mode: iptables
clusterCIDR: ${CLUSTER_CIDR}
hostnameOverride: ${NODE_NAME}
bindAddress: ${NODE_IP}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses:
  - ${NODE_IP}/32
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  minSyncPeriod: 0s
  syncPeriod: 30s
`;
}

/**
 * Brings the cluster up; resolves the handle {kubectl, helm, inNamespace, kubeconfig, ...} once the
 * node is Ready and CoreDNS answers. `images` are the service images to import ({service: name}).
 * Teardown is stopCluster(handle) (the caller's Processes stop the daemons in reverse order).
 */
export async function startCluster({ processes, workDir, tools, programs, buildah, serviceImages, suite, log = say, onStarted = () => {} }) {
  const runId = `${process.pid}`;
  const netns = `worklane-k8s-${runId}`;
  const ns = netnsPath(netns);
  const containerdRoot = path.join(tools.cacheDir, 'containerd');
  const dirs = {
    containerdState: path.join(workDir, 'containerd-state'),
    cniConf: path.join(workDir, 'cni', 'net.d'),
    ipam: path.join(workDir, 'cni', 'ipam'),
    kubelet: path.join(workDir, 'kubelet'),
    podLogs: path.join(workDir, 'pod-logs'),
    volumePlugins: path.join(workDir, 'volume-plugins'),
    etcd: path.join(workDir, 'etcd'),
    images: path.join(workDir, 'images'),
  };
  for (const dir of Object.values(dirs)) fs.mkdirSync(dir, { recursive: true });
  const socket = path.join(workDir, 'containerd.sock');
  const handle = { netns, ns, workDir, containerdRoot, socket, processes };
  // From here on, whatever happens, the caller's teardown knows what to stop.
  onStarted(handle);

  recordState({
    workDir,
    netns,
    containerdRoot,
    containerdSocket: socket,
    hostSettings: recordHostSettings(),
    fixedPaths: snapshotFixedPaths(),
    pids: [],
  });
  const daemons = [];
  /** Starts a daemon in the namespace (`wrap`: more nsenter options, e.g. -S/-G for a user); recorded for the sweep. */
  const launches = new Map();
  const startDaemon = (name, bin, args, { wrap = [], ...options } = {}) => {
    const child = processes.start(name, 'nsenter', [`--net=${ns}`, ...wrap, bin, ...args], options);
    // nsenter execs the daemon: the pid is the daemon's, its command line the daemon's.
    daemons.push({ pid: child.pid, cmd: bin });
    recordState({ pids: daemons });
    launches.set(name, { bin, args, options: { wrap, ...options } });
    return child;
  };
  handle.startDaemon = startDaemon;
  /** Stops a daemon started above with `signal` (SIGKILL after timeoutMs) and starts it again the same way (fault tests). */
  handle.restartDaemon = async (name, { signal = 'SIGTERM', timeoutMs = 30_000 } = {}) => {
    const launch = launches.get(name);
    if (!launch) throw new Error(`no daemon ${name} was started`);
    await processes.stopWith(name, signal, timeoutMs);
    return startDaemon(name, launch.bin, launch.args, launch.options);
  };
  const inNamespace = (cmd, args, options = {}) => run('nsenter', [`--net=${ns}`, cmd, ...args], options);
  handle.inNamespace = inNamespace;

  // The namespace, its settings, the cgroup root.
  createNamespace(netns, { nodeIp: NODE_IP, serviceCidr: SERVICE_CIDR });
  for (const [key, value] of [
    ['net/ipv4/ip_forward', '1'],
    ['net/bridge/bridge-nf-call-iptables', '1'],
    ['net/bridge/bridge-nf-call-ip6tables', '1'],
  ]) {
    await inNamespace('sh', ['-c', `test ! -e /proc/sys/${key} || echo ${value} > /proc/sys/${key}`]);
  }
  createCgroupRoot();
  await suite.check('the namespace has no route out of the machine (no default route, no interface but loopback)', async () => {
    const routes = namespaceRoutes(netns);
    if (/^default/m.test(routes)) throw new Error(`it has a default route:\n${routes}`);
    const { stdout } = await inNamespace('ip', ['-o', 'link', 'show']);
    const links = stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(':')[1].trim());
    if (links.some((l) => l !== 'lo')) throw new Error(`it has interfaces ${links.join(', ')}`);
  });

  // PKI and kubeconfigs. One admin identity (system:masters) for every component: a throwaway test cluster.
  const pki = await makePki(path.join(workDir, 'pki'), { serverNames: [NODE_NAME], serverIps: [NODE_IP] });
  const server = `https://${NODE_IP}:6443`;
  const kubeconfig = writeKubeconfig(path.join(workDir, 'admin.kubeconfig'), { server, ca: pki.ca, user: pki.admin });
  const kubeEnv = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    KUBECACHEDIR: path.join(workDir, 'kube-cache'),
    HELM_CACHE_HOME: path.join(workDir, 'helm-cache'),
    HELM_CONFIG_HOME: path.join(workDir, 'helm-config'),
    HELM_DATA_HOME: path.join(workDir, 'helm-data'),
  };
  handle.kubeconfig = kubeconfig;
  handle.kubectl = (args, options = {}) => inNamespace(tools.kubectl, [`--kubeconfig=${kubeconfig}`, ...args], { env: kubeEnv, ...options });
  handle.helm = (args, options = {}) => inNamespace(tools.helm, [`--kubeconfig=${kubeconfig}`, ...args], { env: kubeEnv, ...options });
  handle.probe = async (url, withClientCert = false) => {
    const args = ['-e', PROBE, url, ...(withClientCert ? [pki.ca, pki.admin.cert, pki.admin.key] : [])];
    const { stdout } = await inNamespace(process.execPath, args);
    try {
      return JSON.parse(stdout);
    } catch {
      return { status: 0, body: stdout };
    }
  };

  // containerd, on a root that a clean teardown marked as clean (else emptied: it may hold a killed run's containers).
  const cleanMark = path.join(containerdRoot, '.worklane-clean');
  if (fs.existsSync(containerdRoot) && !fs.existsSync(cleanMark)) {
    log(`containerd's cached root ${containerdRoot} was not left clean by its last run: emptying it (images are imported again)`);
    unmountUnder([containerdRoot]);
    fs.rmSync(containerdRoot, { recursive: true, force: true });
  }
  fs.mkdirSync(containerdRoot, { recursive: true });
  fs.rmSync(cleanMark, { force: true });
  const images = clusterImages(programs);
  write(path.join(dirs.cniConf, '10-worklane.conflist'), cniConfig(dirs.ipam));
  const containerdToml = write(
    path.join(workDir, 'containerd.toml'),
    containerdConfig({
      root: containerdRoot,
      state: dirs.containerdState,
      socket,
      cniConfDir: dirs.cniConf,
      cniBinDir: tools.runtime.cniBinDir,
      runc: tools.runtime.runc,
      pauseImage: images.pause.name,
    }),
  );
  startDaemon('containerd', tools.runtime.containerd, ['--config', containerdToml, '--log-level', 'warn']);
  const ctr = (args, options = {}) => run(tools.runtime.ctr, ['--address', socket, '--namespace', 'k8s.io', ...args], options);
  handle.ctr = ctr;
  await waitUntil(
    'containerd answers on its socket',
    async () => {
      if (!processes.alive('containerd')) throw new Error(`containerd exited:\n${processes.tail('containerd')}`);
      const { code, stderr } = await ctr(['version']);
      return code === 0 ? true : stderr;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );

  // Images into containerd, while the control plane starts.
  const importing = importImages({
    ctr,
    buildah,
    workDir: dirs.images,
    images: { ...Object.fromEntries(Object.values(images).map((i) => [i.name, i])), ...serviceImages },
    log,
    programs: images,
  });
  // Awaited below; until then a failure must not count as unhandled (it would end the run before its teardown).
  importing.catch(() => undefined);

  // etcd on the namespace's loopback.
  startDaemon('etcd', tools.etcd, [
    '--name=worklane-node',
    `--data-dir=${dirs.etcd}`,
    '--listen-client-urls=http://127.0.0.1:2379',
    '--advertise-client-urls=http://127.0.0.1:2379',
    '--listen-peer-urls=http://127.0.0.1:2380',
    '--initial-advertise-peer-urls=http://127.0.0.1:2380',
    '--initial-cluster=worklane-node=http://127.0.0.1:2380',
    '--listen-metrics-urls=',
    '--logger=zap',
    '--log-level=warn',
    '--quota-backend-bytes=2147483648',
  ]);
  await waitUntil(
    'etcd answers /health',
    async () => {
      if (!processes.alive('etcd')) throw new Error(`etcd exited:\n${processes.tail('etcd')}`);
      const { status, body } = await handle.probe('http://127.0.0.1:2379/health');
      return status === 200 && body.includes('"true"') ? true : `${status} ${body}`;
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );

  startDaemon('kube-apiserver', tools.kubernetes['kube-apiserver'], [
    '--etcd-servers=http://127.0.0.1:2379',
    `--bind-address=${NODE_IP}`,
    `--advertise-address=${NODE_IP}`,
    '--secure-port=6443',
    `--tls-cert-file=${pki.server.cert}`,
    `--tls-private-key-file=${pki.server.key}`,
    `--client-ca-file=${pki.ca}`,
    `--kubelet-client-certificate=${pki.admin.cert}`,
    `--kubelet-client-key=${pki.admin.key}`,
    '--kubelet-preferred-address-types=InternalIP',
    `--service-account-key-file=${pki.serviceAccount.pub}`,
    `--service-account-signing-key-file=${pki.serviceAccount.key}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--authorization-mode=Node,RBAC',
    '--allow-privileged=true',
    '--enable-priority-and-fairness=false',
    '--profiling=false',
    '--v=1',
  ]);
  await waitUntil(
    'kube-apiserver answers /readyz',
    async () => {
      if (!processes.alive('kube-apiserver')) throw new Error(`kube-apiserver exited:\n${processes.tail('kube-apiserver')}`);
      const { status, body } = await handle.probe(`${server}/readyz`, true);
      return status === 200 ? true : `${status} ${body.slice(0, 300)}`;
    },
    { timeoutMs: 120_000, intervalMs: 300 },
  );

  startDaemon('kube-controller-manager', tools.kubernetes['kube-controller-manager'], [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    '--leader-elect=false',
    '--controllers=*,-nodeipam',
    '--allocate-node-cidrs=false',
    `--service-account-private-key-file=${pki.serviceAccount.key}`,
    `--root-ca-file=${pki.ca}`,
    `--cluster-signing-cert-file=${pki.ca}`,
    `--cluster-signing-key-file=${path.join(path.dirname(pki.ca), 'ca.key')}`,
    '--use-service-account-credentials=false',
    `--flex-volume-plugin-dir=${dirs.volumePlugins}`,
    '--profiling=false',
    '--v=1',
  ]);
  startDaemon('kube-scheduler', tools.kubernetes['kube-scheduler'], [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    '--leader-elect=false',
    '--profiling=false',
    '--v=1',
  ]);

  // The kubelet: the node. Pods that use the node's DNS settings get a resolver inside the cluster, never the machine's.
  const resolvConf = write(path.join(workDir, 'resolv.conf'), `nameserver ${DNS_IP}\noptions ndots:1\n`);
  const kubeletYaml = write(path.join(workDir, 'kubelet.yaml'), kubeletConfig({ pki, socket, resolvConf, podLogsDir: dirs.podLogs, volumePluginDir: dirs.volumePlugins }));
  startDaemon('kubelet', tools.kubernetes.kubelet, [
    `--config=${kubeletYaml}`,
    `--kubeconfig=${kubeconfig}`,
    `--root-dir=${dirs.kubelet}`,
    `--cert-dir=${path.join(dirs.kubelet, 'pki')}`,
    `--hostname-override=${NODE_NAME}`,
    `--node-ip=${NODE_IP}`,
    '--v=1',
  ]);
  const kubeProxyYaml = write(path.join(workDir, 'kube-proxy.yaml'), kubeProxyConfig({ kubeconfig }));
  startDaemon('kube-proxy', tools.kubernetes['kube-proxy'], [`--config=${kubeProxyYaml}`, '--v=1']);

  await waitUntil(
    `node ${NODE_NAME} is Ready`,
    async () => {
      for (const name of ['kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy']) {
        if (!processes.alive(name)) throw new Error(`${name} exited:\n${processes.tail(name)}`);
      }
      const { code, stdout, stderr } = await handle.kubectl([
        'get',
        'node',
        NODE_NAME,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].message}',
      ]);
      return code === 0 && stdout.startsWith('True') ? true : (stdout || stderr).trim();
    },
    { timeoutMs: 180_000, intervalMs: 500 },
  );
  await suite.check(`node ${NODE_NAME} is Ready, running Kubernetes ${tools.version}`, async () => {
    const { stdout } = await handle.kubectl(['get', 'node', NODE_NAME, '-o', 'jsonpath={.status.nodeInfo.kubeletVersion}']);
    if (stdout.trim() !== `v${tools.version}`) throw new Error(`the kubelet reports ${stdout}`);
  });

  // The network-policy controller, before any pod: from here on every NetworkPolicy is enforced.
  if (tools.kubeRouter) await startPolicyController(handle, { kubeRouter: tools.kubeRouter, nodeName: NODE_NAME, serviceCidr: SERVICE_CIDR });

  await importing;

  // CoreDNS, the cluster's DNS (kube-system/kube-dns at DNS_IP).
  const applied = await handle.kubectl(['apply', '-f', '-'], { input: coreDnsManifest({ image: images.coredns.name, dnsIp: DNS_IP }) });
  if (applied.code !== 0) throw new Error(`could not create CoreDNS: ${applied.stderr}`);
  await waitForRollout(handle, 'kube-system', 'deployment/coredns', 180_000);
  // Ready is not yet reachable: kube-proxy programs the Service's address once it sees the
  // ready endpoint. Asked from the namespace itself, as a pod would through the same rules.
  await waitUntil(
    `the cluster DNS answers at its Service address ${DNS_IP}`,
    async () => {
      const { code, stdout, stderr } = await inNamespace(process.execPath, ['-e', DNS_QUERY, DNS_IP, 'kubernetes.default.svc.cluster.local']);
      return code === 0 ? true : `${stdout}${stderr}`.trim();
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  return handle;
}

/** Waits until the rollout is complete; the failure says what the pods are doing. */
export async function waitForRollout(handle, namespace, what, timeoutMs) {
  const result = await handle.kubectl(['rollout', 'status', '-n', namespace, what, `--timeout=${Math.round(timeoutMs / 1000)}s`]);
  if (result.code !== 0) {
    const pods = await handle.kubectl(['get', 'pods', '-n', namespace, '-o', 'wide']);
    const events = await handle.kubectl(['get', 'events', '-n', namespace, '--sort-by=.lastTimestamp']);
    throw new Error(`${what} did not roll out: ${result.stderr || result.stdout}\n${pods.stdout}\n${events.stdout.split('\n').slice(-15).join('\n')}`);
  }
}

/**
 * Imports each image into containerd's k8s.io namespace unless it is there already: the cluster's
 * own images (a static binary in an otherwise empty image, made with buildah) and the service
 * images. Images of the suite's repositories with other tags are removed.
 */
async function importImages({ ctr, buildah, workDir, images, log, programs }) {
  const { stdout } = await ctr(['images', 'ls', '-q']);
  const present = new Set(stdout.split('\n').filter(Boolean));
  const wanted = new Set(Object.values(images).map((i) => (typeof i === 'string' ? i : i.name)));
  const stale = [...present].filter((name) => /^localhost\/worklane(-test)?\//.test(name) && !wanted.has(name));
  if (stale.length > 0) await ctr(['images', 'rm', ...stale]);
  const logFile = path.join(workDir, 'import.log');
  const queue = Object.values(images).filter((image) => !present.has(typeof image === 'string' ? image : image.name));
  // Two at a time: an export is mostly disk and compression, an import mostly disk.
  const worker = async () => {
    for (let image = queue.shift(); image; image = queue.shift()) await importOne(image);
  };
  const importOne = async (image) => {
    const name = typeof image === 'string' ? image : image.name;
    const started = Date.now();
    const program = Object.values(programs).find((p) => p.name === name);
    if (program) await makeProgramImage(buildah, program, logFile);
    const tar = path.join(workDir, `${name.replace(/[/:]/g, '_')}.tar`);
    // Set-up, not an assertion: an export or import that fails for a passing reason is tried again.
    await retrySetUp(
      `importing ${name}`,
      async () => {
        try {
          await exportImage(buildah, name, tar, logFile);
          const imported = await ctr(['images', 'import', tar]);
          if (imported.code !== 0) throw new Error(`ctr images import ${name} failed: ${imported.stderr}`);
        } finally {
          fs.rmSync(tar, { force: true });
        }
      },
      { say: log },
    );
    log(`imported ${name} into containerd in ${Math.round((Date.now() - started) / 1000)} s`);
  };
  await Promise.all([worker(), worker()]);
}

/** An image holding one static binary as its entrypoint, made with buildah unless it exists. */
async function makeProgramImage(buildah, program, logFile) {
  const exists = await run(buildah.bin, ['inspect', '--type', 'image', program.name], { env: buildah.env });
  if (exists.code === 0) return;
  const options = { log: logFile, env: buildah.env };
  const from = await run(buildah.bin, ['from', `--signature-policy=${buildah.signaturePolicy}`, 'scratch'], { env: buildah.env });
  if (from.code !== 0) throw new Error(`buildah from scratch failed: ${from.stderr}`);
  const container = from.stdout.trim();
  try {
    await runLoggedChecked(buildah.bin, ['copy', '--chmod=0755', container, program.bin, program.path], options);
    await runLoggedChecked(buildah.bin, ['config', `--entrypoint=["${program.path}"]`, '--cmd=', container], options);
    await runLoggedChecked(buildah.bin, ['commit', `--signature-policy=${buildah.signaturePolicy}`, container, program.name], options);
  } finally {
    await runLogged(buildah.bin, ['rm', container], options);
  }
}

/**
 * Stops the cluster's workloads and daemons and undoes what it changed on the machine: the
 * kubelet and kube-proxy first, then every container (so no shim outlives containerd), then the
 * control plane and containerd by pid in reverse order of their start. Returns what it did.
 */
export async function stopCluster(handle) {
  const { processes, ctr } = handle;
  const done = [];
  for (const name of ['kube-router', 'kube-proxy', 'kubelet']) {
    const entry = processes.running.find((p) => p.name === name);
    if (entry) await processes.stop(entry);
  }
  if (ctr && processes.alive('containerd')) {
    const { stdout } = await ctr(['containers', 'ls', '-q']);
    const ids = stdout.split('\n').filter(Boolean);
    for (const id of ids) {
      await ctr(['tasks', 'kill', '--signal', 'SIGKILL', id]);
    }
    for (const id of ids) {
      await waitUntil(
        `the task of container ${id} stops`,
        async () => {
          const { stdout: tasks } = await ctr(['tasks', 'ls']);
          return !tasks.split('\n').some((l) => l.startsWith(`${id} `) && /RUNNING|PAUSED|CREATED/.test(l)) || 'still running';
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      ).catch(() => undefined);
      await ctr(['tasks', 'delete', '--force', id]);
      await ctr(['containers', 'rm', id]);
    }
    const { stdout: left } = await ctr(['containers', 'ls', '-q']);
    if (ids.length > 0) done.push(`removed ${ids.length} container(s)`);
    if (left.trim() === '') fs.writeFileSync(path.join(handle.containerdRoot, '.worklane-clean'), `${new Date().toISOString()}\n`);
  }
  const order = ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd', 'containerd'];
  for (const name of order) {
    const entry = processes.running.find((p) => p.name === name);
    if (entry) await processes.stop(entry);
  }
  return done;
}
