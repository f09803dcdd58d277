// Phase (e): the chart installed on the test cluster with its default values plus only what this
// environment needs (where the images are and that they are never pulled; the PostgreSQL and NATS
// addresses), every pod Ready, then `helm test`.
//
// PostgreSQL and the three-server NATS JetStream cluster the release uses (the chart's default
// streams have three replicas) run as pods of the cluster, in a namespace of their own
// (src/data-services.mjs); the release reaches them by their Services' names, and reads its
// DATABASE_URL, which carries the run's generated password, from a Secret (database.existingSecret).
import fs from 'node:fs';
import path from 'node:path';

import { repoRoot } from '../../dev/src/util.mjs';
import { waitForRollout } from './cluster.mjs';
import { waitUntil } from './commands.mjs';
import { DATABASE_SECRET, NATS_PODS, natsUrl } from './data-services.mjs';
import { IMAGE_NAMESPACE, IMAGE_REGISTRY } from './images.mjs';
import { receiverValues } from './receiver.mjs';

export const RELEASE = 'worklane';
export const RELEASE_NAMESPACE = 'worklane';
/** The NATS servers' pod names (in the data services' namespace). */
export const NATS_SERVERS = NATS_PODS.map((name) => ({ name }));

/**
 * The values this environment needs, and nothing else: the chart's defaults stay as they are.
 * Where the images are (and that they are never pulled), the Secret holding the PostgreSQL URL
 * and the NATS address, and the test receiver: its range allowed, its CA trusted by the delivery
 * pods.
 */
export function environmentValues(tag) {
  return {
    image: { registry: IMAGE_REGISTRY, namespace: IMAGE_NAMESPACE, tag, pullPolicy: 'Never' },
    database: { existingSecret: { name: DATABASE_SECRET } },
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

/** Runs the `worklane` CLI from inside the namespace, as an operator of the release; returns the JSON it prints last. */
export async function worklaneCli(cluster, release, args) {
  const bin = path.join(repoRoot, 'tools', 'worklane', 'bin', 'worklane.mjs');
  const env = { ...process.env, ...release.env, CLI_PRIVATE_KEY: release.cliPrivateKey };
  const { code, stdout, stderr } = await cluster.inNamespace(process.execPath, [bin, ...args], { env });
  if (code !== 0) throw new Error(`worklane ${args[0]} failed: ${stderr}${stdout}`);
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.trim().startsWith('{'));
  return JSON.parse(line);
}

/**
 * A team of its own, made with the CLI's `bootstrap` as an operator would (deploy/README.md,
 * "First user"): the user, team, organization and first token; the user's email comes back too.
 */
export async function bootstrapTeam(cluster, release, { name, tokenName }) {
  const id = `${process.pid}-${Date.now()}`;
  const email = `${name.toLowerCase()}-${id}@example.test`;
  const args = ['--email', email, '--password', `password-${id}`, '--team', `${name} ${id}`, '--organization', name, '--token-name', tokenName];
  return { ...(await worklaneCli(cluster, release, ['bootstrap', ...args])), email };
}
