// Container tooling for `npm run test:kubernetes`, from Debian (apt-get as root, no service ever
// started):
//   buildah (+ mmdebstrap for the Node base image)  builds the service images, no daemon needed
//   containerd, runc, the CNI plugins, iptables, conntrack  run the test cluster's node
// buildah's storage and configuration are the project's own, under the user cache
// (~/.cache/worklane/containers), never /etc/containers or /var/lib/containers: images built once
// stay there for the next run, and nothing of the machine's own container set-up is touched.
import fs from 'node:fs';
import path from 'node:path';

import { UserError, say, which } from '../util.mjs';
import { aptInstall, canUseApt } from './apt.mjs';
import { isExecutable, userCacheDir } from './cache.mjs';
import { atLeast, formatVersion, probeVersion } from './version.mjs';
import { TOOLS } from './versions.mjs';

/** Finds each of `bins` (name -> version args) at the tool's minimum; installs the tool's packages when one is missing. */
async function ensureDebianTool(tool, bins, label) {
  const find = () => {
    const found = {};
    for (const [name, versionArgs] of Object.entries(bins)) {
      const bin = which(name, ['/usr/bin', '/usr/sbin', '/sbin']);
      if (!bin) return null;
      if (versionArgs) {
        const version = probeVersion(bin, versionArgs);
        if (!atLeast(version, tool.minimum)) {
          say(`${name} ${formatVersion(version)} at ${bin} is older than the ${tool.minimum} the Kubernetes suite needs: skipping it`);
          return null;
        }
        found.version ??= formatVersion(version);
      }
      found[name] = bin;
    }
    return found;
  };
  let found = find();
  if (!found && canUseApt()) {
    say(`${label} not found: installing Debian's ${tool.aptPackages.join(', ')} (apt-get)`);
    await aptInstall(tool.aptPackages);
    found = find();
  }
  if (!found) throw new UserError(`${label} ${tool.minimum}+ was not found.\nInstall it with \`sudo apt-get install -y ${tool.aptPackages.join(' ')}\` (Debian/Ubuntu).`);
  return found;
}

/** Where buildah keeps the project's images and layers, and its configuration files. */
export function containersDir(env = process.env) {
  return path.join(userCacheDir(env), 'containers');
}

/**
 * buildah's configuration, written under containersDir: overlay storage there, runc with cgroupfs
 * (no systemd), ulimits a container may set as root in a VM (the defaults fail with "setrlimit
 * RLIMIT_NOFILE: Operation not permitted"), events to a file, docker.io for short names, and a
 * policy accepting the locally made images. Returns the variables that point buildah at it.
 */
export function writeContainersConfig(env = process.env) {
  const dir = containersDir(env);
  const files = {
    'storage.conf': ['[storage]', 'driver = "overlay"', `graphroot = "${path.join(dir, 'storage')}"`, `runroot = "${path.join('/run', 'worklane-containers')}"`, ''],
    'containers.conf': [
      '[containers]',
      'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]',
      '[engine]',
      'cgroup_manager = "cgroupfs"',
      'runtime = "runc"',
      'events_logger = "file"',
      `events_logfile_path = "${path.join(dir, 'events.log')}"`,
      '',
    ],
    'registries.conf': ['unqualified-search-registries = ["docker.io"]', 'short-name-mode = "permissive"', ''],
    'policy.json': ['{"default": [{"type": "insecureAcceptAnything"}]}', ''],
  };
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, lines] of Object.entries(files)) {
    const file = path.join(dir, name);
    const text = lines.join('\n');
    if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== text) fs.writeFileSync(file, text);
  }
  return {
    CONTAINERS_STORAGE_CONF: path.join(dir, 'storage.conf'),
    CONTAINERS_CONF: path.join(dir, 'containers.conf'),
    CONTAINERS_REGISTRIES_CONF: path.join(dir, 'registries.conf'),
    BUILDAH_ISOLATION: 'oci',
    signaturePolicy: path.join(dir, 'policy.json'),
  };
}

let buildah = null;

/** {bin, version, mmdebstrap, env, signaturePolicy}: buildah and its configuration. */
export function ensureBuildah() {
  buildah ??= (async () => {
    const found = await ensureDebianTool(TOOLS.buildah, { buildah: ['--version'], mmdebstrap: null }, 'buildah');
    const { signaturePolicy, ...vars } = writeContainersConfig();
    return { bin: found.buildah, version: found.version, mmdebstrap: found.mmdebstrap, env: { ...process.env, ...vars }, signaturePolicy };
  })();
  buildah.catch(() => {
    buildah = null;
  });
  return buildah;
}

const CNI_PLUGINS = ['bridge', 'host-local', 'loopback', 'portmap'];

let nodeRuntime = null;

/** {bin (containerd), version, ctr, runc, iptables, conntrack, cniBinDir}: what the test cluster's node runs on. */
export function ensureNodeRuntime() {
  nodeRuntime ??= (async () => {
    const found = await ensureDebianTool(
      TOOLS.containerd,
      { containerd: ['--version'], ctr: null, runc: null, iptables: null, conntrack: null, 'containerd-shim-runc-v2': null },
      'containerd, runc and the CNI plugins',
    );
    const cniBinDir = ['/usr/lib/cni', '/opt/cni/bin'].find((dir) => CNI_PLUGINS.every((p) => isExecutable(path.join(dir, p))));
    if (!cniBinDir) throw new UserError(`the CNI plugins (${CNI_PLUGINS.join(', ')}) were not found.\nInstall them with \`sudo apt-get install -y containernetworking-plugins\`.`);
    return { ...found, bin: found.containerd, cniBinDir };
  })();
  nodeRuntime.catch(() => {
    nodeRuntime = null;
  });
  return nodeRuntime;
}
