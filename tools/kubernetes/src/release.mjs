// Phase (e): the chart installed on the test cluster with its default values plus only what this
// environment needs (where the images are and that they are never pulled; the PostgreSQL and NATS
// addresses), every pod Ready, then `helm test`.
//
// PostgreSQL and a three-server NATS JetStream cluster (the chart's default stream has three
// replicas) run as processes in the cluster's network namespace, bound to the node address, which
// pods reach like any address of their node. They are started and stopped by pid with the
// cluster's daemons.
import fs from 'node:fs';
import path from 'node:path';

import { postgresRunAs } from '../../dev/src/postgres-server.mjs';
import { repoRoot, run } from '../../dev/src/util.mjs';
import { NODE_IP, waitForRollout } from './cluster.mjs';
import { waitUntil } from './commands.mjs';
import { IMAGE_NAMESPACE, IMAGE_REGISTRY } from './images.mjs';
import { receiverValues } from './receiver.mjs';

export const RELEASE = 'worklane';
export const RELEASE_NAMESPACE = 'worklane';
const POSTGRES_PORT = 5432;
export const NATS_SERVERS = [
  { name: 'nats-0', client: 4222, cluster: 6222, monitor: 8222 },
  { name: 'nats-1', client: 4223, cluster: 6223, monitor: 8223 },
  { name: 'nats-2', client: 4224, cluster: 6224, monitor: 8224 },
];

export const databaseUrl = () => `postgres://postgres@${NODE_IP}:${POSTGRES_PORT}/postgres`;
export const natsUrl = () => NATS_SERVERS.map((s) => `nats://${NODE_IP}:${s.client}`).join(',');

/** PostgreSQL in the namespace, as an unprivileged user (it refuses root); trust authentication: the namespace is the boundary. */
export async function startPostgresInNamespace(cluster, { postgres, workDir }) {
  const user = postgresRunAs();
  const dir = path.join(workDir, 'postgres');
  const data = path.join(dir, 'data');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The run's directory is private to root: let the server's user through it (not read it).
  fs.chmodSync(workDir, 0o711);
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  if (user) fs.chownSync(dir, user.uid, user.gid);
  const initdb = await run(postgres.initdb, ['-D', data, '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--auth=trust', '--no-sync'], {
    ...asUser,
    cwd: dir,
    env: { ...process.env, LC_ALL: 'C' },
  });
  if (initdb.code !== 0) throw new Error(`initdb failed: ${initdb.stdout}${initdb.stderr}`);
  fs.writeFileSync(path.join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 0.0.0.0/0 trust\n');
  const settings = {
    listen_addresses: NODE_IP,
    port: POSTGRES_PORT,
    unix_socket_directories: dir,
    max_connections: 300,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
  };
  const args = Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
  const setUser = user ? ['-S', String(user.uid), '-G', String(user.gid)] : [];
  cluster.startDaemon('postgres', postgres.postgres, ['-D', data, ...args], { wrap: setUser });
  cluster.waitForPostgres = () =>
    waitUntil(
      'PostgreSQL accepts connections on the node address',
      async () => {
        if (!cluster.processes.alive('postgres')) throw new Error(`postgres exited:\n${cluster.processes.tail('postgres')}`);
        const { code, stdout, stderr } = await cluster.inNamespace(path.join(postgres.binDir, 'pg_isready'), ['-h', NODE_IP, '-p', String(POSTGRES_PORT), '-U', 'postgres']);
        return code === 0 ? true : `${stdout}${stderr}`.trim();
      },
      { timeoutMs: 120_000, intervalMs: 300 },
    );
  await cluster.waitForPostgres();
}

/** Three nats-server processes clustered with JetStream on the node address. */
export async function startNatsInNamespace(cluster, { natsServer, workDir }) {
  for (const server of NATS_SERVERS) {
    const store = path.join(workDir, 'nats', server.name);
    fs.mkdirSync(store, { recursive: true });
    const routes = NATS_SERVERS.filter((s) => s !== server).map((s) => `nats://${NODE_IP}:${s.cluster}`);
    const config = path.join(workDir, 'nats', `${server.name}.conf`);
    fs.writeFileSync(
      config,
      [
        `server_name: ${server.name}`,
        `listen: "${NODE_IP}:${server.client}"`,
        `http: "${NODE_IP}:${server.monitor}"`,
        'jetstream {',
        `  store_dir: "${store}"`,
        '  max_memory_store: 268435456',
        '  max_file_store: 4294967296',
        '}',
        'cluster {',
        '  name: worklane-test',
        `  listen: "${NODE_IP}:${server.cluster}"`,
        `  routes: [${routes.map((r) => `"${r}"`).join(', ')}]`,
        '}',
        '',
      ].join('\n'),
    );
    cluster.startDaemon(server.name, natsServer.bin, ['-c', config]);
  }
  await waitUntil(
    'the three NATS servers report JetStream healthy',
    async () => {
      const answers = [];
      for (const server of NATS_SERVERS) {
        if (!cluster.processes.alive(server.name)) throw new Error(`${server.name} exited:\n${cluster.processes.tail(server.name)}`);
        const { status, body } = await cluster.probe(`http://${NODE_IP}:${server.monitor}/healthz`);
        if (status !== 200) answers.push(`${server.name}: ${status} ${body.trim()}`);
      }
      return answers.length === 0 ? true : answers.join('; ');
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
}

/**
 * The values this environment needs, and nothing else: the chart's defaults stay as they are.
 * Where the images are (and that they are never pulled), the PostgreSQL and NATS addresses, and
 * the test receiver: its range allowed, its CA trusted by the delivery pods.
 */
export function environmentValues(tag) {
  return {
    image: { registry: IMAGE_REGISTRY, namespace: IMAGE_NAMESPACE, tag, pullPolicy: 'Never' },
    database: { url: databaseUrl() },
    nats: { url: natsUrl() },
    ...receiverValues(),
  };
}

/** Writes values (an object) as a JSON values file in dir; returns its path. */
function valuesFile(dir, name, values) {
  const file = path.join(dir, `${name}-values.json`);
  fs.writeFileSync(file, `${JSON.stringify(values, null, 2)}\n`);
  return file;
}

/** What the release's pods are doing, for failure messages. */
export async function describeRelease(cluster) {
  const pods = await cluster.kubectl(['get', 'pods', '-n', RELEASE_NAMESPACE, '-o', 'wide']);
  const events = await cluster.kubectl(['get', 'events', '-n', RELEASE_NAMESPACE, '--sort-by=.lastTimestamp']);
  return `${pods.stdout}${pods.stderr}\n${events.stdout.split('\n').slice(-20).join('\n')}`;
}

/** helm install with the environment's values; resolves when helm returns (--wait: Deployments available). */
export async function installRelease(cluster, { tag, timeoutMs = 10 * 60_000 }) {
  const chart = path.join(repoRoot, 'charts', 'worklane');
  const result = await cluster.helm([
    'install',
    RELEASE,
    chart,
    '--namespace',
    RELEASE_NAMESPACE,
    '--create-namespace',
    '--values',
    valuesFile(cluster.workDir, 'environment', environmentValues(tag)),
    '--wait',
    `--timeout=${Math.round(timeoutMs / 1000)}s`,
  ]);
  if (result.code !== 0) throw new Error(`helm install failed: ${result.stderr || result.stdout}\n${await describeRelease(cluster)}`);
  return result.stdout;
}

/**
 * helm upgrade to `values` (a list of value objects, later ones winning; nothing reused from the
 * last release), waiting like the install; `name` names the values files.
 */
export async function upgradeRelease(cluster, { values, name, timeoutMs = 10 * 60_000, extraArgs = [] }) {
  const chart = path.join(repoRoot, 'charts', 'worklane');
  const files = values.flatMap((v, i) => ['--values', valuesFile(cluster.workDir, `${name}-${i}`, v)]);
  const result = await cluster.helm(['upgrade', RELEASE, chart, '--namespace', RELEASE_NAMESPACE, ...files, '--wait', `--timeout=${Math.round(timeoutMs / 1000)}s`, ...extraArgs]);
  if (result.code !== 0) throw new Error(`helm upgrade (${name}) failed: ${result.stderr || result.stdout}\n${await describeRelease(cluster)}`);
  return result.stdout;
}

/** Every Deployment of the release rolled out and every pod not owned by a Job Ready; resolves {deployments, pods}. */
export async function waitForReleaseReady(cluster, timeoutMs = 5 * 60_000) {
  const { stdout } = await cluster.kubectl(['get', 'deployments', '-n', RELEASE_NAMESPACE, '-o', 'jsonpath={.items[*].metadata.name}']);
  const deployments = stdout.split(/\s+/).filter(Boolean);
  if (deployments.length === 0) throw new Error('the release has no Deployment');
  for (const name of deployments) await waitForRollout(cluster, RELEASE_NAMESPACE, `deployment/${name}`, timeoutMs);
  let pods = [];
  await waitUntil(
    'every pod of the release is Ready',
    async () => {
      const list = await cluster.kubectl(['get', 'pods', '-n', RELEASE_NAMESPACE, '-o', 'json']);
      if (list.code !== 0) return list.stderr;
      pods = JSON.parse(list.stdout).items.filter((p) => !(p.metadata.ownerReferences ?? []).some((o) => o.kind === 'Job'));
      const notReady = pods.filter((p) => !(p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') || p.metadata.deletionTimestamp);
      return notReady.length === 0 ? true : `not Ready: ${notReady.map((p) => `${p.metadata.name} (${p.status.phase})`).join(', ')}`;
    },
    { timeoutMs, intervalMs: 1_000 },
  );
  return { deployments, pods: pods.map((p) => p.metadata.name) };
}

/**
 * helm test; resolves its output. A test pod that succeeded is deleted by its hook policy (so
 * `--logs` cannot be used); one that failed is kept, and its log is part of the failure.
 */
export async function testRelease(cluster, timeoutMs = 5 * 60_000) {
  const result = await cluster.helm(['test', RELEASE, '--namespace', RELEASE_NAMESPACE, `--timeout=${Math.round(timeoutMs / 1000)}s`]);
  if (result.code !== 0) {
    const pods = await cluster.kubectl(['get', 'pods', '-n', RELEASE_NAMESPACE, '-l', 'app.kubernetes.io/component=test', '-o', 'name']);
    const logs = [];
    for (const pod of pods.stdout.split('\n').filter(Boolean)) {
      const log = await cluster.kubectl(['logs', '-n', RELEASE_NAMESPACE, pod]);
      logs.push(`${pod}:\n${log.stdout}${log.stderr}`);
    }
    throw new Error(`helm test failed: ${result.stderr || result.stdout}\n${logs.join('\n')}\n${await describeRelease(cluster)}`);
  }
  return result.stdout;
}
