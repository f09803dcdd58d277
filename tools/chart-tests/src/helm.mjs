// Runs the real helm binary: HELM_BIN (set by `npm test`, which provisions helm), else <repo>/.cache/bin/helm, else PATH.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { chartDir, ciValuesDir, repoRoot } from './paths.mjs';

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function findHelm() {
  const candidates = [process.env.HELM_BIN, path.join(repoRoot, '.cache/bin/helm')].filter(Boolean);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    candidates.push(path.join(dir, 'helm'));
  }
  const found = candidates.find(executable);
  if (!found) {
    throw new Error('helm not found: run the chart tests through `npm test -- --filter=@worklane/chart-tests`, which ' + 'provisions it into .cache/bin, or set HELM_BIN');
  }
  return found;
}

/** Runs helm with args; returns { status, stdout, stderr } and never throws on a non-zero exit. */
export function runHelm(args) {
  const result = spawnSync(findHelm(), args, {
    cwd: repoRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, HELM_CACHE_HOME: path.join(repoRoot, '.cache/helm'), HELM_CONFIG_HOME: path.join(repoRoot, '.cache/helm-config') },
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export const ciValueFiles = readdirSync(ciValuesDir)
  .filter((file) => file.endsWith('.yaml'))
  .sort();

/**
 * The cluster `helm template` renders for, as helm cannot ask one: the Kubernetes version the
 * suite's API server runs (helm's own default, 1.20, is below the chart's kubeVersion), and
 * whether it serves the Prometheus Operator's kinds.
 */
export const KUBE_VERSION = '1.32.4';
export const PROMETHEUS_OPERATOR_APIS = ['monitoring.coreos.com/v1/ServiceMonitor', 'monitoring.coreos.com/v1/PrometheusRule'];

/**
 * `helm template` flags for a ci/*.yaml file or extra --set pairs; `apiVersions` are the extra API
 * versions the cluster serves (default: the Prometheus Operator's, as on a cluster with its CRDs).
 */
export function templateArgs({ valuesFile, set = [], values = [], release = 'ci', namespace = 'worklane', kubeVersion = KUBE_VERSION, apiVersions = PROMETHEUS_OPERATOR_APIS }) {
  const args = ['template', release, chartDir, '--namespace', namespace, '--kube-version', kubeVersion];
  for (const api of apiVersions) args.push('--api-versions', api);
  if (valuesFile) args.push('--values', path.join(ciValuesDir, valuesFile));
  for (const file of values) args.push('--values', file);
  for (const pair of set) args.push('--set', pair);
  return args;
}

/** Renders the chart and returns the parsed objects; throws with helm's message when rendering fails. */
export function render(options) {
  const { status, stdout, stderr } = runHelm(templateArgs(options));
  if (status !== 0) throw new Error(`helm template failed (${status}):\n${stderr}`);
  return parseManifests(stdout);
}

/** Renders and expects failure; returns helm's stderr. */
export function renderFailure(options) {
  const { status, stderr } = runHelm(templateArgs(options));
  if (status === 0) throw new Error(`helm template succeeded but was expected to fail (${JSON.stringify(options)})`);
  return stderr;
}

export function parseManifests(text) {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`rendered YAML does not parse: ${doc.errors[0].message}`);
      return doc.toJS();
    })
    .filter((object) => object && typeof object === 'object');
}

/** The value sets every rendered-output test runs on: the chart's ci/*.yaml and deploy/values-*.yaml. */
export const deployValueFiles = ['deploy/values-development.yaml', 'deploy/values-production.yaml'];
export const valueSets = [...ciValueFiles.map((file) => `ci/${file}`), ...deployValueFiles];

const cache = new Map();
/** The rendered objects of a value set (`ci/<file>`, `<file>` in ci/, or a repo-relative path), rendered once per test file. */
export function renderCi(valueSet) {
  if (!cache.has(valueSet)) {
    const options = valueSet.startsWith('deploy/') ? { values: [path.join(repoRoot, valueSet)] } : { valuesFile: valueSet.replace(/^ci\//, '') };
    cache.set(valueSet, render(options));
  }
  return cache.get(valueSet);
}
