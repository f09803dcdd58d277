// Kubernetes binaries for `npm run test:kubernetes`, built from the Go module proxy: a small
// wrapper module requires k8s.io/kubernetes at the pinned version and replaces each of its
// staging modules (k8s.io/api, k8s.io/client-go, ...; kubernetes' own go.mod points them at
// ./staging, which a module download does not have) with the matching v0.x release. The build
// stamps the version, without which the API server reports v0.0.0 and Helm's kubeVersion
// checks fail. Each binary is taken from <repo>/.cache/bin (at the pinned version), else from
// the user's cache (an earlier clone on this machine built it), else built (minutes: the API
// server alone is a large program) and kept in both.
import fs from 'node:fs';
import path from 'node:path';

import { UserError, runChecked, say } from '../util.mjs';
import { cacheBinDir, copyAtomically, isExecutable, userCacheDir } from './cache.mjs';
import { findGo } from './go-tools.mjs';
import { formatVersion, parseVersion, probeVersion } from './version.mjs';
import { TOOLS } from './versions.mjs';

const { pinned, module } = TOOLS.kubernetes;

/** The commands `go build` makes, and how each reports its version. */
export const KUBERNETES_BINARIES = {
  'kube-apiserver': { pkg: 'k8s.io/kubernetes/cmd/kube-apiserver', versionArgs: ['--version'] },
  kubectl: { pkg: 'k8s.io/kubernetes/cmd/kubectl', versionArgs: ['version', '--client'] },
  // The test cluster's control plane and node (`npm run test:kubernetes`'s cluster phases).
  'kube-controller-manager': { pkg: 'k8s.io/kubernetes/cmd/kube-controller-manager', versionArgs: ['--version'] },
  'kube-scheduler': { pkg: 'k8s.io/kubernetes/cmd/kube-scheduler', versionArgs: ['--version'] },
  kubelet: { pkg: 'k8s.io/kubernetes/cmd/kubelet', versionArgs: ['--version'] },
  'kube-proxy': { pkg: 'k8s.io/kubernetes/cmd/kube-proxy', versionArgs: ['--version'] },
};

/** What the API-server phase needs, and what a whole single-node cluster needs on top of it. */
export const API_SERVER_BINARIES = ['kube-apiserver', 'kubectl'];
export const CLUSTER_BINARIES = ['kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy'];

const goEnv = (env) => ({
  ...env,
  // The wrapper module has no go.sum of its own: let go add what it verifies.
  GOFLAGS: [env.GOFLAGS, '-mod=mod'].filter(Boolean).join(' '),
  // The checksum database the proxy serves has no entry for k8s.io/kubernetes (not meant to be
  // imported) nor for some of its staging modules: those come from the proxy unverified (go.sum
  // records them); every other module is still checked against the database.
  GONOSUMDB: [env.GONOSUMDB, 'k8s.io'].filter(Boolean).join(','),
  CGO_ENABLED: '0',
});

const isPinned = (bin, name, env) => formatVersion(probeVersion(bin, KUBERNETES_BINARIES[name].versionArgs, env)) === formatVersion(parseVersion(pinned));

/** The binary's path when one at the pinned version is at hand (copied from the user cache if need be), else null. */
export function findKubernetesBinary(name, env = process.env) {
  const local = path.join(cacheBinDir, name);
  if (isExecutable(local) && isPinned(local, name, env)) return local;
  const cached = path.join(userCacheDir(env), 'bin', `${name}-${pinned}`);
  if (isExecutable(cached) && isPinned(cached, name, env)) {
    copyAtomically(cached, local);
    return local;
  }
  return null;
}

/** The staging modules kubernetes' go.mod replaces with ./staging paths. */
export function stagingModules(goMod) {
  const block = /^replace \(\n([\s\S]*?)^\)/m.exec(goMod)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => /^\s*(\S+)\s+=>\s+\.\/staging\//.exec(line)?.[1])
    .filter(Boolean);
}

/** The wrapper module's go.mod: kubernetes at `version`, its staging modules at v0.<minor>.<patch>. */
export function wrapperGoMod(version, modules) {
  const [major, minor, patch] = parseVersion(version);
  if (major !== 1) throw new Error(`cannot map Kubernetes ${version} to its staging module versions`);
  const staging = `v0.${minor}.${patch}`;
  return [
    'module worklane.local/kubernetes-tools',
    '',
    'go 1.23.0',
    '',
    `require ${module} v${version}`,
    '',
    'replace (',
    ...modules.map((name) => `\t${name} => ${name} ${staging}`),
    ')',
    '',
  ].join('\n');
}

/** -ldflags stamping the version into k8s.io/component-base and client-go, as the release build does. */
export function versionLdflags(version) {
  const [major, minor] = parseVersion(version);
  const stamp = (pkg) => [`-X ${pkg}.gitVersion=v${version}`, `-X ${pkg}.gitMajor=${major}`, `-X ${pkg}.gitMinor=${minor}`, `-X ${pkg}.gitTreeState=clean`];
  return ['-s', '-w', ...stamp('k8s.io/component-base/version'), ...stamp('k8s.io/client-go/pkg/version'), '-X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z'].join(
    ' ',
  );
}

let building = Promise.resolve();

/** Builds the named binaries at the pinned version in one `go build`; returns {name: path}. Builds queue up (one work directory). */
export function buildKubernetes(names, env = process.env) {
  const result = building.then(() => buildKubernetesNow(names, env));
  building = result.catch(() => undefined);
  return result;
}

async function buildKubernetesNow(names, env) {
  const go = findGo(env);
  if (!go) {
    throw new UserError(`Building Kubernetes ${pinned} needs Go ${TOOLS.go.minimum}+: install it (Debian: \`sudo apt-get install -y golang-go\`) and run again.`);
  }
  const workDir = path.join(userCacheDir(env), 'build', `kubernetes-${pinned}`);
  fs.mkdirSync(workDir, { recursive: true });
  const buildEnv = goEnv(env);
  const { stdout } = await runChecked(go, ['mod', 'download', '-json', `${module}@v${pinned}`], { cwd: workDir, env: buildEnv });
  const goModFile = JSON.parse(stdout).GoMod;
  const modules = stagingModules(fs.readFileSync(goModFile, 'utf8'));
  if (modules.length === 0) throw new Error(`no staging modules found in ${goModFile}`);
  const goMod = wrapperGoMod(pinned, modules);
  const goModPath = path.join(workDir, 'go.mod');
  if (!fs.existsSync(goModPath) || !fs.readFileSync(goModPath, 'utf8').startsWith(goMod.trimEnd())) {
    fs.writeFileSync(goModPath, goMod);
    fs.rmSync(path.join(workDir, 'go.sum'), { force: true });
  }
  const outDir = path.join(workDir, 'bin');
  fs.mkdirSync(outDir, { recursive: true });
  await runChecked(go, ['build', '-trimpath', `-ldflags=${versionLdflags(pinned)}`, '-o', `${outDir}/`, ...names.map((name) => KUBERNETES_BINARIES[name].pkg)], {
    cwd: workDir,
    env: buildEnv,
  });
  const result = {};
  for (const name of names) {
    const built = path.join(outDir, name);
    if (!isPinned(built, name, env)) throw new Error(`${built} does not report Kubernetes ${pinned}`);
    copyAtomically(built, path.join(userCacheDir(env), 'bin', `${name}-${pinned}`));
    copyAtomically(built, path.join(cacheBinDir, name));
    result[name] = path.join(cacheBinDir, name);
  }
  return result;
}

const ensured = new Map();

/**
 * {bin (kube-apiserver), bins: {name: path}, version}: the named binaries (by default the API
 * server and kubectl), found, or built once per machine in one `go build` (several minutes on 2
 * cores; the Go build cache makes the next ones quicker).
 */
export function ensureKubernetes(names = API_SERVER_BINARIES) {
  const key = names.join(',');
  if (ensured.has(key)) return ensured.get(key);
  const result = (async () => {
    const bins = {};
    const missing = [];
    for (const name of names) {
      const found = findKubernetesBinary(name);
      if (found) bins[name] = found;
      else missing.push(name);
    }
    if (missing.length > 0) {
      say(`building ${missing.join(', ')} ${pinned} from the Go module proxy into .cache/bin (once per machine; minutes on 2 cores)`);
      Object.assign(bins, await buildKubernetes(missing));
    }
    return { bin: bins['kube-apiserver'] ?? bins[names[0]], bins, version: pinned };
  })();
  ensured.set(key, result);
  result.catch(() => ensured.delete(key));
  return result;
}
