// kube-router, the Kubernetes suite's network-policy controller: the test cluster's CNI (a plain
// bridge) carries the traffic, and kube-router, run with its firewall alone (no routing, no service
// proxy), turns every NetworkPolicy into iptables rules and ipsets in the cluster's network
// namespace, so the chart's policies are enforced as a policy-capable CNI would enforce them.
//
// Built from the Go module proxy at the pinned version, through a wrapper module (the module's
// own `go install` path asks the proxy for the module's version list, which it does not serve
// here), CGO_ENABLED=0, kept in the user's cache under its version and rebuilt only when that
// changes. The checksum database has no entry for this module: the wrapper's go.sum is seeded with
// the module's pinned hashes (TOOLS.kubeRouter.sums), so a download that differs is refused.
//
// It runs `ipset` and `iptables`: Debian's packages, installed with apt-get when missing.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { UserError, runChecked, say, which } from '../util.mjs';
import { aptInstall, canUseApt } from './apt.mjs';
import { isExecutable, userCacheDir } from './cache.mjs';
import { findGo } from './go-tools.mjs';
import { TOOLS } from './versions.mjs';

const SYSTEM_DIRS = ['/usr/sbin', '/sbin', '/usr/bin'];

/** The wrapper module's go.mod and go.sum (the pinned module's two hashes). */
export function kubeRouterWrapper({ pinned, module, sums } = TOOLS.kubeRouter) {
  return {
    goMod: ['module worklane.local/kube-router', '', 'go 1.23.0', '', `require ${module} v${pinned}`, ''].join('\n'),
    goSum: [`${module} v${pinned} ${sums.module}`, `${module} v${pinned}/go.mod ${sums.goMod}`, ''].join('\n'),
  };
}

/** Whether bin is kube-router at the pinned version (it prints `Running <its path> version v2.1.0, ...`). */
function reportsPinned(bin, env) {
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return result.status === 0 && / version v(\S+?),/.exec(`${result.stdout}${result.stderr}`)?.[1] === TOOLS.kubeRouter.pinned;
}

/** Finds ipset and iptables, installing Debian's packages when one is missing; resolves {ipset, iptables}. */
async function ensureFirewallTools() {
  const find = () => {
    const ipset = which('ipset', SYSTEM_DIRS);
    const iptables = which('iptables', SYSTEM_DIRS);
    return ipset && iptables ? { ipset, iptables } : null;
  };
  let found = find();
  if (!found && canUseApt()) {
    say(`ipset or iptables not found: installing Debian's ${TOOLS.kubeRouter.aptPackages.join(', ')} (apt-get)`);
    await aptInstall(TOOLS.kubeRouter.aptPackages);
    found = find();
  }
  if (!found) throw new UserError(`kube-router needs ipset and iptables.\nInstall them with \`sudo apt-get install -y ${TOOLS.kubeRouter.aptPackages.join(' ')}\`.`);
  return found;
}

async function buildKubeRouter(bin, env) {
  const { pinned, module } = TOOLS.kubeRouter;
  const go = findGo(env);
  if (!go) throw new UserError(`Building kube-router ${pinned} needs Go ${TOOLS.go.minimum}+: install it (Debian: \`sudo apt-get install -y golang-go\`) and run again.`);
  say(`building kube-router ${pinned} from the Go module proxy (once per machine; minutes on 2 cores)`);
  const workDir = path.join(userCacheDir(env), 'build', `kube-router-${pinned}`);
  fs.mkdirSync(workDir, { recursive: true });
  const { goMod, goSum } = kubeRouterWrapper();
  const goModPath = path.join(workDir, 'go.mod');
  if (!fs.existsSync(goModPath) || fs.readFileSync(goModPath, 'utf8') !== goMod) {
    fs.writeFileSync(goModPath, goMod);
    // The pinned hashes first; go adds its dependencies' (which the checksum database does verify).
    fs.writeFileSync(path.join(workDir, 'go.sum'), goSum);
  }
  const out = path.join(workDir, 'kube-router');
  await runChecked(go, ['build', '-trimpath', `-ldflags=-s -w -X ${module}/pkg/version.Version=v${pinned}`, '-o', out, `${module}/cmd/kube-router`], {
    cwd: workDir,
    env: {
      ...env,
      CGO_ENABLED: '0',
      GOFLAGS: [env.GOFLAGS, '-mod=mod'].filter(Boolean).join(' '),
      GONOSUMDB: [env.GONOSUMDB, module].filter(Boolean).join(','),
    },
  });
  if (!reportsPinned(out, env)) throw new Error(`${out} does not report kube-router ${pinned}`);
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  fs.copyFileSync(out, `${bin}.tmp`);
  fs.chmodSync(`${bin}.tmp`, 0o755);
  fs.renameSync(`${bin}.tmp`, bin);
}

let kubeRouter = null;

/** {bin, version, ipset, iptables, path}: kube-router at the pinned version and the firewall tools it runs (`path`: a PATH finding them). */
export function ensureKubeRouter(env = process.env) {
  kubeRouter ??= (async () => {
    const { pinned } = TOOLS.kubeRouter;
    const tools = await ensureFirewallTools();
    const bin = path.join(userCacheDir(env), 'bin', `kube-router-${pinned}`);
    if (!isExecutable(bin) || !reportsPinned(bin, env)) await buildKubeRouter(bin, env);
    const dirs = [...new Set([path.dirname(tools.ipset), path.dirname(tools.iptables), ...SYSTEM_DIRS])];
    return { bin, version: pinned, ...tools, path: dirs.join(path.delimiter) };
  })();
  kubeRouter.catch(() => {
    kubeRouter = null;
  });
  return kubeRouter;
}
