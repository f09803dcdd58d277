// etcd, the API server's store in `npm run test:kubernetes`: from PATH at the minimum version, else
// Debian's etcd-server installed with apt-get (root only; its service is never started).
import { UserError, say, which } from '../util.mjs';
import { aptInstall, canUseApt } from './apt.mjs';
import { atLeast, formatVersion, probeVersion } from './version.mjs';
import { TOOLS } from './versions.mjs';

const { minimum, aptPackage } = TOOLS.etcd;

/** {bin, version} of an etcd on PATH (or /usr/bin) that is recent enough; null otherwise (logged). */
export function findEtcd(env = process.env) {
  const bin = which('etcd', ['/usr/bin'], env);
  if (!bin) return null;
  const version = probeVersion(bin, ['--version'], env);
  if (atLeast(version, minimum)) return { bin, version: formatVersion(version) };
  say(`etcd ${formatVersion(version)} at ${bin} is older than the ${minimum} the Kubernetes suite needs: skipping it`);
  return null;
}

let found = null;

export async function ensureEtcd() {
  if (found) return found;
  let result = findEtcd();
  if (!result && canUseApt()) {
    say(`etcd ${minimum}+ not found: installing Debian's ${aptPackage} (apt-get)`);
    await aptInstall([aptPackage]);
    result = findEtcd();
  }
  if (!result) {
    throw new UserError(`etcd ${minimum} or newer was not found on PATH.\nInstall it with \`sudo apt-get install -y ${aptPackage}\` (Debian/Ubuntu).`);
  }
  found = result;
  return found;
}
