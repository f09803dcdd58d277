// Phase (a): every value set of the chart, rendered by helm for the suite's API server (its real
// version and APIs, `helm template --validate`) and every object, hooks included, sent to that
// server with `kubectl apply --dry-run=server --validate=strict`: admission, the built-in
// validation (a NetworkPolicy's except ranges, say) and unknown fields, exactly as an install
// would meet them, without anything being stored.
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

import { repoRoot, run } from '../../dev/src/util.mjs';

export const chartDir = path.join(repoRoot, 'charts/worklane');
export const NAMESPACE = 'worklane';
export const RELEASE = 'ci';
const MONITORING_KINDS = ['ServiceMonitor', 'PrometheusRule'];
export const CRD_FILE = path.join(repoRoot, 'tools/kubernetes/crds/monitoring.coreos.com.yaml');

/** The value sets: charts/worklane/ci/*.yaml (the chart's own) and deploy/values-*.yaml (what operators start from). */
export function valueSets() {
  const ci = fs
    .readdirSync(path.join(chartDir, 'ci'))
    .filter((file) => file.endsWith('.yaml'))
    .sort()
    .map((file) => `charts/worklane/ci/${file}`);
  const deploy = fs
    .readdirSync(path.join(repoRoot, 'deploy'))
    .filter((file) => /^values-.*\.yaml$/.test(file))
    .sort()
    .map((file) => `deploy/${file}`);
  return [...ci, ...deploy];
}

export function parseObjects(text) {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS())
    .filter((object) => object && typeof object === 'object');
}

/** helm with its caches in the repository's .cache, as the chart tests run it; `env` adds to the environment. */
export function helm(helmBin, args, env = {}) {
  return run(helmBin, args, {
    cwd: repoRoot,
    env: { ...process.env, HELM_CACHE_HOME: path.join(repoRoot, '.cache/helm'), HELM_CONFIG_HOME: path.join(repoRoot, '.cache/helm-config'), ...env },
  });
}

/** Renders a value set for the cluster behind kubeconfig; resolves the objects (throws with helm's message). */
export async function renderForCluster({ helmBin, kubeconfig, kubeEnv = {}, valueSet, extraArgs = [] }) {
  const args = ['template', RELEASE, chartDir, '--namespace', NAMESPACE, '--validate', '--kubeconfig', kubeconfig, ...extraArgs];
  if (valueSet) args.push('--values', path.join(repoRoot, valueSet));
  const { code, stdout, stderr } = await helm(helmBin, args, kubeEnv);
  if (code !== 0) throw new Error(`helm template failed:\n${stderr.trim()}`);
  return { text: stdout, objects: parseObjects(stdout) };
}

/** Sends rendered objects to the API server as a server-side dry run; throws with kubectl's errors. */
export async function dryRunApply(kubectl, text, expectedCount) {
  const { code, stdout, stderr } = await kubectl(['apply', '--dry-run=server', '--validate=strict', '--namespace', NAMESPACE, '-f', '-'], { input: text });
  if (code !== 0) throw new Error(`the API server refused objects:\n${stderr.trim()}`);
  const accepted = stdout.split('\n').filter((line) => /\(server dry run\)$/.test(line)).length;
  if (accepted !== expectedCount) throw new Error(`${expectedCount} objects rendered but ${accepted} accepted:\n${stdout}`);
  return accepted;
}

const monitoringIn = (objects) => objects.filter((o) => MONITORING_KINDS.includes(o.kind)).map((o) => o.kind);

/**
 * One check per value set for one CRD mode (`withCrds`: whether the monitoring CRDs are
 * installed): rendered for the cluster, monitoring objects only when it serves them, every object
 * accepted.
 */
export async function validateValueSets(suite, { helmBin, kubeconfig, kubeEnv, kubectl, withCrds }) {
  const mode = withCrds ? 'with the Prometheus Operator CRDs' : 'without the Prometheus Operator CRDs';
  for (const valueSet of valueSets()) {
    await suite.check(`${valueSet} ${mode}: every object accepted by the API server`, async () => {
      const { text, objects } = await renderForCluster({ helmBin, kubeconfig, kubeEnv, valueSet });
      const monitoring = monitoringIn(objects);
      const values = parseObjects(fs.readFileSync(path.join(repoRoot, valueSet), 'utf8'))[0] ?? {};
      const enabled = Boolean(values.metrics?.serviceMonitor?.enabled || values.metrics?.prometheusRule?.enabled);
      if (!withCrds && monitoring.length > 0) throw new Error(`rendered ${monitoring.join(', ')} for a cluster without their CRDs`);
      if (withCrds && enabled && monitoring.length === 0) throw new Error('monitoring is enabled but nothing was rendered although the CRDs are installed');
      await dryRunApply(kubectl, text, objects.length);
    });
  }
}

/** Installs the CRDs for real and waits until the API server serves them. */
export async function installMonitoringCrds(kubectl) {
  const applied = await kubectl(['apply', '-f', CRD_FILE]);
  if (applied.code !== 0) throw new Error(`the CRDs were refused:\n${applied.stderr}`);
  const waited = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com']);
  if (waited.code !== 0) throw new Error(`the CRDs were not established:\n${waited.stderr}`);
}

/** With nothing set, the chart renders nothing and says what is missing (a PostgreSQL URL). */
export async function refusesBareDefaults({ helmBin, kubeconfig, kubeEnv }) {
  const { code, stderr } = await helm(helmBin, ['template', RELEASE, chartDir, '--namespace', NAMESPACE, '--validate', '--kubeconfig', kubeconfig], kubeEnv);
  if (code === 0) throw new Error('helm template succeeded without a database URL');
  if (!/needs PostgreSQL: set database\.url/.test(stderr)) throw new Error(`unexpected message:\n${stderr.trim()}`);
}

/** On a cluster without the CRDs, `helm install` (server dry run) tells that the monitoring objects were left out. */
export async function noCrdNotes({ helmBin, kubeconfig, kubeEnv }) {
  const args = ['install', RELEASE, chartDir, '--namespace', NAMESPACE, '--dry-run=server', '--kubeconfig', kubeconfig];
  args.push('--values', path.join(chartDir, 'ci/all-enabled-values.yaml'));
  const { code, stdout, stderr } = await helm(helmBin, args, kubeEnv);
  if (code !== 0) throw new Error(`helm install --dry-run=server failed:\n${stderr.trim()}`);
  const notes = stdout.slice(stdout.indexOf('NOTES:'));
  for (const kind of MONITORING_KINDS) {
    if (!notes.includes(`NOTE: no ${kind} was created`)) throw new Error(`the notes do not mention the missing ${kind}:\n${notes}`);
  }
}
