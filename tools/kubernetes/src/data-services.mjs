// Part of phase (e): PostgreSQL and a three-server NATS JetStream cluster, as pods of the test
// cluster, in a namespace of their own (DATA_NAMESPACE), from the images of src/data-images.mjs.
//
//   PostgreSQL  a StatefulSet of one pod behind the Service `postgres`; its data on a volume that
//               outlives the pod. The superuser's password is made for the run (random, never
//               written to the repository or the log): a Secret here for the server, and a Secret
//               in the release's namespace holding the DATABASE_URL the chart reads
//               (database.existingSecret).
//   NATS        a StatefulSet of three nats-server pods with JetStream, routed to each other by
//               their names under the headless Service `nats-headless`; clients use the Service
//               `nats`. Each server keeps its JetStream store on a volume of its own, so a server
//               whose pod is deleted comes back under the same name with the same store, and the
//               streams' replicas on it catch up instead of starting over.
//
// The volumes are `local` PersistentVolumes on the node (folders of the run's directory, given to
// the user each server runs as), pre-bound to the claims the StatefulSets' volumeClaimTemplates
// make, with a StorageClass that provisions nothing. They are Retain: deleting a pod, or even its
// claim, never deletes the data; the run's teardown removes the folders.
//
// NATS has no authentication here: the services' NATS client takes only server addresses
// (NATS_URL), and nothing outside the run's network namespace can reach the cluster.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { NODE_NAME, waitForRollout } from './cluster.mjs';
import { waitUntil } from './commands.mjs';

export const DATA_NAMESPACE = 'worklane-data';
const STORAGE_CLASS = 'worklane-test-local';
const POSTGRES = { name: 'postgres', port: 5432, uid: 999, gid: 999, claim: 'data' };
const NATS = { name: 'nats', headless: 'nats-headless', replicas: 3, client: 4222, cluster: 6222, monitor: 8222, uid: 1000, gid: 1000, claim: 'store' };
/** The Secret, in the release's namespace, holding DATABASE_URL (key of the chart's database.existingSecret default). */
export const DATABASE_SECRET = 'worklane-test-database';
/** The streams the services declare with the chart's defaults (nats.stream, nats.webhookChanges). */
export const STREAMS = ['ISSUE_EVENTS', 'WEBHOOK_CHANGES'];

export const NATS_PODS = Array.from({ length: NATS.replicas }, (_, i) => `${NATS.name}-${i}`);
export const POSTGRES_POD = `${POSTGRES.name}-0`;
const serviceHost = (name) => `${name}.${DATA_NAMESPACE}.svc.cluster.local`;

/** The NATS servers as the release's pods reach them (NATS_URL). */
export const natsUrl = () => `nats://${serviceHost(NATS.name)}:${NATS.client}`;
/** PostgreSQL as the release's pods reach it, without its password. */
export const databaseAddress = () => `${serviceHost(POSTGRES.name)}:${POSTGRES.port}`;

/** The nats-server configuration: the server's name from its pod, JetStream on its volume, routes to all three by name. */
function natsConfig() {
  const routes = NATS_PODS.map((pod) => `    "nats://${pod}.${serviceHost(NATS.headless)}:${NATS.cluster}"`);
  return [
    'server_name: $POD_NAME',
    `listen: "0.0.0.0:${NATS.client}"`,
    `http: "0.0.0.0:${NATS.monitor}"`,
    'jetstream {',
    '  store_dir: "/data"',
    '  max_memory_store: 64MB',
    '  max_file_store: 4GB',
    '}',
    'cluster {',
    '  name: worklane-test',
    `  listen: "0.0.0.0:${NATS.cluster}"`,
    '  routes: [',
    ...routes,
    '  ]',
    '}',
    '',
  ].join('\n');
}

/** A local PersistentVolume on the node at `dir`, pre-bound to the claim `claim`. */
function localVolume({ name, claim, dir, size }) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, labels: { 'app.kubernetes.io/part-of': 'worklane-test-data' } },
    spec: {
      capacity: { storage: size },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: STORAGE_CLASS,
      volumeMode: 'Filesystem',
      local: { path: dir },
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: DATA_NAMESPACE, name: claim },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [NODE_NAME] }] }] } },
    },
  };
}

const restricted = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } };

/**
 * A StatefulSet of one data server's pods, started together: each runs `container` (a local image)
 * as the server's own user with no service account token, on a local volume of `storage` claimed
 * as `server.claim`.
 */
function dataStatefulSet({ server, serviceName, replicas, storage, container, volumes }) {
  const labels = { 'app.kubernetes.io/name': server.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: server.name, namespace: DATA_NAMESPACE, labels },
    spec: {
      serviceName,
      replicas,
      // A JetStream cluster needs all its peers at once to elect a leader.
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 30,
          securityContext: { runAsNonRoot: true, runAsUser: server.uid, runAsGroup: server.gid, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [{ imagePullPolicy: 'Never', securityContext: restricted, ...container }],
          volumes,
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: server.claim },
          spec: { accessModes: ['ReadWriteOnce'], storageClassName: STORAGE_CLASS, resources: { requests: { storage } } },
        },
      ],
    },
  };
}

function postgresStatefulSet(image) {
  const ready = { exec: { command: ['pg_isready', '-h', '127.0.0.1', '-p', String(POSTGRES.port), '-U', 'postgres'] } };
  return dataStatefulSet({
    server: POSTGRES,
    serviceName: POSTGRES.name,
    replicas: 1,
    storage: '2Gi',
    // Its stop signal (SIGINT, fast shutdown) ends the sessions and writes a checkpoint within the grace period.
    container: {
      name: 'postgres',
      image,
      // As the suite's local PostgreSQL runs: room for every service's pools, no waiting on the disk.
      args: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
      env: [{ name: 'POSTGRES_PASSWORD_FILE', value: '/run/secrets/postgres/password' }],
      ports: [{ name: 'postgres', containerPort: POSTGRES.port }],
      readinessProbe: { ...ready, periodSeconds: 2, timeoutSeconds: 5 },
      livenessProbe: { ...ready, initialDelaySeconds: 30, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 6 },
      resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
      volumeMounts: [
        { name: POSTGRES.claim, mountPath: '/var/lib/postgresql/data' },
        { name: 'password', mountPath: '/run/secrets/postgres', readOnly: true },
        { name: 'socket', mountPath: '/var/run/postgresql' },
        { name: 'tmp', mountPath: '/tmp' },
      ],
    },
    volumes: [
      { name: 'password', secret: { secretName: 'postgres-auth' } },
      { name: 'socket', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
      { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
    ],
  });
}

function natsStatefulSet(image) {
  const healthz = (query) => ({ httpGet: { path: `/healthz${query}`, port: NATS.monitor } });
  return dataStatefulSet({
    server: NATS,
    serviceName: NATS.headless,
    replicas: NATS.replicas,
    storage: '4Gi',
    container: {
      name: 'nats',
      image,
      args: ['--config', '/etc/nats/nats.conf'],
      env: [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'GOMEMLIMIT', value: '400MiB' },
      ],
      ports: [
        { name: 'client', containerPort: NATS.client },
        { name: 'cluster', containerPort: NATS.cluster },
        { name: 'monitor', containerPort: NATS.monitor },
      ],
      // Started once JetStream is current (its streams caught up); Ready and alive while JetStream is on.
      startupProbe: { ...healthz(''), periodSeconds: 2, timeoutSeconds: 5, failureThreshold: 90 },
      readinessProbe: { ...healthz('?js-enabled-only=true'), periodSeconds: 2, timeoutSeconds: 5 },
      livenessProbe: { ...healthz('?js-enabled-only=true'), periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 3 },
      resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '512Mi' } },
      volumeMounts: [
        { name: NATS.claim, mountPath: '/data' },
        { name: 'config', mountPath: '/etc/nats', readOnly: true },
      ],
    },
    volumes: [{ name: 'config', configMap: { name: 'nats-config' } }],
  });
}

/**
 * Every object of the data services, and the DATABASE_URL Secret of the release's namespace.
 * `volumes` maps each claim name to its folder on the node.
 */
export function dataServicesManifest({ images, volumes, password, releaseNamespace }) {
  const pgLabels = { 'app.kubernetes.io/name': POSTGRES.name };
  const natsLabels = { 'app.kubernetes.io/name': NATS.name };
  const databaseUrl = `postgres://postgres:${encodeURIComponent(password)}@${databaseAddress()}/postgres`;
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: DATA_NAMESPACE } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: releaseNamespace } },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: STORAGE_CLASS },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
      reclaimPolicy: 'Retain',
    },
    ...Object.entries(volumes).map(([claim, { dir, size }]) => localVolume({ name: `worklane-test-${claim}`, claim, dir, size })),
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'postgres-auth', namespace: DATA_NAMESPACE }, stringData: { password } },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: DATABASE_SECRET, namespace: releaseNamespace }, stringData: { DATABASE_URL: databaseUrl } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nats-config', namespace: DATA_NAMESPACE }, data: { 'nats.conf': natsConfig() } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: POSTGRES.name, namespace: DATA_NAMESPACE, labels: pgLabels },
      spec: { selector: pgLabels, ports: [{ name: 'postgres', port: POSTGRES.port, targetPort: POSTGRES.port }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: NATS.name, namespace: DATA_NAMESPACE, labels: natsLabels },
      spec: { selector: natsLabels, ports: [{ name: 'client', port: NATS.client, targetPort: NATS.client }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: NATS.headless, namespace: DATA_NAMESPACE, labels: natsLabels },
      spec: {
        clusterIP: 'None',
        // The routes resolve each server by name before it is Ready: the cluster forms first.
        publishNotReadyAddresses: true,
        selector: natsLabels,
        ports: [
          { name: 'client', port: NATS.client, targetPort: NATS.client },
          { name: 'cluster', port: NATS.cluster, targetPort: NATS.cluster },
          { name: 'monitor', port: NATS.monitor, targetPort: NATS.monitor },
        ],
      },
    },
    postgresStatefulSet(images.postgres),
    natsStatefulSet(images.nats),
  ];
  return { apiVersion: 'v1', kind: 'List', items: objects };
}

/** The node folders of the volumes, each given to the user its server runs as: {claim: {dir, size}}. */
function makeVolumeFolders(workDir) {
  const root = path.join(workDir, 'volumes');
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  const volumes = {};
  const add = (claim, { uid, gid }, size) => {
    const dir = path.join(root, claim);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chownSync(dir, uid, gid);
    volumes[claim] = { dir, size };
  };
  add(`${POSTGRES.claim}-${POSTGRES_POD}`, POSTGRES, '2Gi');
  for (const pod of NATS_PODS) add(`${NATS.claim}-${pod}`, NATS, '4Gi');
  return volumes;
}

async function kubectlJson(cluster, args) {
  const { code, stdout, stderr } = await cluster.kubectl([...args, '-o', 'json']);
  if (code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${stderr.trim()}`);
  return JSON.parse(stdout);
}

const isReady = (pod) => !pod.metadata.deletionTimestamp && (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** What the data pods are doing, for failure messages. */
export async function describeDataServices(cluster) {
  const pods = await cluster.kubectl(['get', 'pods,pvc', '-n', DATA_NAMESPACE, '-o', 'wide']);
  const events = await cluster.kubectl(['get', 'events', '-n', DATA_NAMESPACE, '--sort-by=.lastTimestamp']);
  return `${pods.stdout}${pods.stderr}\n${events.stdout.split('\n').slice(-20).join('\n')}`;
}

/** The NATS pods with their addresses; throws unless all three exist. */
async function natsPods(cluster) {
  const list = await kubectlJson(cluster, ['get', 'pods', '-n', DATA_NAMESPACE, '-l', `app.kubernetes.io/name=${NATS.name}`]);
  return NATS_PODS.map((name) => {
    const pod = list.items.find((p) => p.metadata.name === name);
    if (!pod) throw new Error(`no pod ${name}`);
    return { name, ip: pod.status?.podIP, ready: isReady(pod), uid: pod.metadata.uid };
  });
}

/** True when every NATS pod is Ready and answers /healthz (JetStream current) on its own address; else what is not. */
export async function natsHealthy(cluster) {
  const answers = [];
  for (const pod of await natsPods(cluster)) {
    if (!pod.ready || !pod.ip) {
      answers.push(`${pod.name}: not Ready`);
      continue;
    }
    const { status, body } = await cluster.probe(`http://${pod.ip}:${NATS.monitor}/healthz`);
    if (status !== 200) answers.push(`${pod.name}: ${status} ${body.trim()}`);
  }
  return answers.length === 0 || answers.join('; ');
}

/**
 * Each stream as its leader reports it (only the leader knows how far the other replicas are):
 * every server's monitoring endpoint is asked for the streams it leads.
 * Resolves {name: {replicas, leader, peers: [{name, current}]}}.
 */
export async function streamInfo(cluster) {
  const streams = {};
  const unanswered = [];
  for (const pod of await natsPods(cluster)) {
    const { status, body } = pod.ip
      ? await cluster.probe(`http://${pod.ip}:${NATS.monitor}/jsz?accounts=true&streams=true&config=true&stream-leader-only=true`)
      : { status: 0, body: 'no address' };
    if (status !== 200) {
      unanswered.push(`${pod.name}: ${status} ${body.slice(0, 200)}`);
      continue;
    }
    for (const account of JSON.parse(body).account_details ?? []) {
      for (const stream of account.stream_detail ?? []) {
        streams[stream.name] = {
          replicas: stream.config?.num_replicas,
          leader: stream.cluster?.leader ?? null,
          peers: (stream.cluster?.replicas ?? []).map((r) => ({ name: r.name, current: r.current === true })),
        };
      }
    }
  }
  if (unanswered.length === NATS_PODS.length) throw new Error(`no NATS server answered /jsz (${unanswered.join('; ')})`);
  return streams;
}

/** True when `name` has `replicas` replicas, a leader and every other replica current; else what is missing. */
export async function streamReplicated(cluster, name, replicas = NATS.replicas) {
  const stream = (await streamInfo(cluster))[name];
  if (!stream) return `no server leads a stream ${name}`;
  const current = stream.peers.filter((p) => p.current).length;
  if (stream.replicas !== replicas || !stream.leader || stream.peers.length !== replicas - 1 || current !== replicas - 1) {
    return `${name}: ${stream.replicas} replicas configured, leader ${stream.leader ?? 'none'}, ${current} of ${stream.peers.length} other replicas current`;
  }
  return true;
}

/**
 * Creates the data services and resolves once PostgreSQL accepts the run's password through its
 * Service and every NATS server reports JetStream healthy. Resolves {images} (for the suite's
 * messages); the password stays in the cluster's Secrets.
 */
export async function startDataServices(cluster, { images, workDir, releaseNamespace }) {
  const password = randomBytes(24).toString('hex');
  const manifest = dataServicesManifest({ images, volumes: makeVolumeFolders(workDir), password, releaseNamespace });
  const applied = await cluster.kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
  if (applied.code !== 0) throw new Error(`could not create PostgreSQL and NATS: ${applied.stderr}`);
  try {
    await waitForRollout(cluster, DATA_NAMESPACE, `statefulset/${POSTGRES.name}`, 5 * 60_000);
    await waitForRollout(cluster, DATA_NAMESPACE, `statefulset/${NATS.name}`, 5 * 60_000);
  } catch (error) {
    throw new Error(`${error.message}\n${await describeDataServices(cluster)}`, { cause: error });
  }
  await waitUntil('every NATS server reports JetStream healthy', () => natsHealthy(cluster), { timeoutMs: 180_000, intervalMs: 1_000 });
  return { images };
}

/**
 * Runs psql in the PostgreSQL pod against the Service's name (through the cluster DNS and the
 * Service, as the release connects) with the password of its Secret, or with `password` when
 * given; resolves {code, output}.
 */
export async function psqlThroughService(cluster, sql, password = null) {
  const passwordFrom = password === null ? 'PGPASSWORD="$(cat "$POSTGRES_PASSWORD_FILE")"' : `PGPASSWORD='${password}'`;
  const script = `${passwordFrom} exec psql -h ${serviceHost(POSTGRES.name)} -p ${POSTGRES.port} -U postgres -d postgres -w -Atc "$1"`;
  const { code, stdout, stderr } = await cluster.kubectl(['exec', '-n', DATA_NAMESPACE, POSTGRES_POD, '-c', 'postgres', '--', 'sh', '-c', script, 'psql', sql]);
  return { code, output: `${stdout}${stderr}`.trim() };
}

/** The pod's uid and the volume its claim is bound to (to tell a new pod on the same volume). */
export async function podIdentity(cluster, pod) {
  const object = await kubectlJson(cluster, ['get', 'pod', '-n', DATA_NAMESPACE, pod]);
  const claim = object.spec.volumes.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim.claimName;
  const pvc = await kubectlJson(cluster, ['get', 'pvc', '-n', DATA_NAMESPACE, claim]);
  return { uid: object.metadata.uid, claim, volume: pvc.spec.volumeName };
}

/** Deletes a data pod (its claim and volume stay); resolves its identity before the deletion. */
export async function deleteDataPod(cluster, pod) {
  const before = await podIdentity(cluster, pod);
  const deleted = await cluster.kubectl(['delete', 'pod', '-n', DATA_NAMESPACE, pod, '--wait=false']);
  if (deleted.code !== 0) throw new Error(`kubectl delete pod ${pod}: ${deleted.stderr}`);
  return before;
}

/** Waits until the StatefulSet has made `pod` again (a new uid), Ready, on the same volume as `before`. */
export async function waitForDataPodBack(cluster, pod, before, timeoutMs = 180_000) {
  await waitUntil(
    `${DATA_NAMESPACE}/${pod} is back and Ready`,
    async () => {
      const object = await kubectlJson(cluster, ['get', 'pod', '-n', DATA_NAMESPACE, pod]);
      if (object.metadata.uid === before.uid) return 'the old pod is still there';
      return isReady(object) || `new pod ${object.status?.phase ?? 'without a phase'}, not Ready`;
    },
    { timeoutMs, intervalMs: 500 },
  );
  const after = await podIdentity(cluster, pod);
  if (after.claim !== before.claim || after.volume !== before.volume) {
    throw new Error(`${pod} came back on claim ${after.claim} (volume ${after.volume}), not on ${before.claim} (volume ${before.volume})`);
  }
  return after;
}
