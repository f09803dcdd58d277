// What the test cluster changes on the machine, and how every bit of it is put back:
//   - a network namespace of the run's own (the node, pod and service addresses exist only in it;
//     it has no route out of the machine)
//   - host-wide sysctls the kubelet sets (kernel.panic and friends are not per namespace): their
//     values are recorded before and restored after
//   - cgroups under one root of the suite's own (/sys/fs/cgroup/<controller>/worklane-k8s): every
//     process still in them at the end is killed by its pid, then the cgroups are removed
//   - mounts (pod volumes, container root filesystems, pod network namespaces) under the run's
//     directories: unmounted, deepest first
//   - the few paths the kubelet, containerd and the CNI plugins use whatever their flags
//     (/var/lib/kubelet/device-plugins, /var/log/containers, /var/lib/cni, /run/containerd/s...):
//     what the run added there is removed
// kube-router, the network-policy controller, changes nothing here: its iptables rules and ipsets
// belong to the namespace (both are per network namespace) and go with it, and phase (c) checks
// that none of them is on the machine.
// A run records all of it in /run/worklane-kubernetes/state.json as it goes; a later run finds the
// record of one that was killed (its owner pid gone) and cleans up after it first, and refuses to
// start while another run is alive.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { UserError, isAlive, processArgs, say, sleep } from '../../dev/src/util.mjs';

export const CGROUP_ROOT = 'worklane-k8s';
const STATE_DIR = '/run/worklane-kubernetes';
const STATE_FILE = path.join(STATE_DIR, 'state.json');
const CGROUP_FS = '/sys/fs/cgroup';

/** Host-wide settings the kubelet or kube-proxy may write. */
export const HOST_SYSCTLS = ['kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes', 'vm/overcommit_memory', 'vm/panic_on_oom'];
const HOST_PARAMETERS = ['/sys/module/nf_conntrack/parameters/hashsize'];

/** Paths used whatever the flags say; what a run adds under them is removed afterwards. */
export const FIXED_PATHS = [
  '/var/lib/kubelet',
  '/var/log/containers',
  '/var/log/pods',
  '/var/lib/cni',
  '/run/containerd',
  '/etc/cni',
  '/opt/cni',
  '/opt/containerd',
  '/usr/libexec/kubernetes',
  '/etc/kubernetes',
];

function readSetting(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** {file: value} of every host-wide setting that exists here. */
export function recordHostSettings() {
  const values = {};
  for (const file of [...HOST_SYSCTLS.map((s) => path.join('/proc/sys', s)), ...HOST_PARAMETERS]) {
    const value = readSetting(file);
    if (value !== null) values[file] = value;
  }
  return values;
}

/** Writes back every recorded value that changed; returns the names restored. */
export function restoreHostSettings(recorded) {
  const restored = [];
  for (const [file, value] of Object.entries(recorded ?? {})) {
    const now = readSetting(file);
    if (now === null || now === value) continue;
    try {
      fs.writeFileSync(file, value);
      restored.push(`${file.replace('/proc/sys/', '').replace(/\//g, '.')} ${now} -> ${value}`);
    } catch (error) {
      restored.push(`${file}: could not restore ${value} (${error.message})`);
    }
  }
  return restored;
}

/** A listing of each fixed path, three levels deep (null for a path that does not exist). */
export function snapshotFixedPaths() {
  const snapshot = {};
  const walk = (dir, depth, out) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      out.push(full);
      if (depth > 1 && entry.isDirectory() && !entry.isSymbolicLink()) walk(full, depth - 1, out);
    }
  };
  for (const p of FIXED_PATHS) {
    if (!fs.existsSync(p)) {
      snapshot[p] = null;
      continue;
    }
    const out = [];
    walk(p, 3, out);
    snapshot[p] = out;
  }
  return snapshot;
}

/** Removes what was added under the fixed paths since `snapshot` (a path that was absent goes whole). */
export function restoreFixedPaths(snapshot) {
  const removed = [];
  for (const [root, before] of Object.entries(snapshot ?? {})) {
    if (!fs.existsSync(root)) continue;
    if (before === null) {
      fs.rmSync(root, { recursive: true, force: true });
      removed.push(root);
      continue;
    }
    const known = new Set(before);
    const now = [];
    const walk = (dir, depth) => {
      let entries;
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const full = path.join(dir, entry.name);
        if (!known.has(full)) now.push(full);
        else if (depth > 1 && entry.isDirectory() && !entry.isSymbolicLink()) walk(full, depth - 1);
      }
    };
    walk(root, 3);
    for (const p of now) {
      fs.rmSync(p, { recursive: true, force: true });
      removed.push(p);
    }
  }
  return removed;
}

/** Mount points at or under any of `roots`, deepest first. */
export function mountsUnder(roots) {
  const text = readSetting('/proc/self/mountinfo') ?? '';
  const points = text
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter(Boolean)
    .map((p) => p.replace(/\\040/g, ' '))
    .filter((p) => roots.some((root) => p === root || p.startsWith(`${root}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Unmounts everything under roots (lazily when busy); returns how many were unmounted. */
export function unmountUnder(roots) {
  let count = 0;
  for (let pass = 0; pass < 5; pass += 1) {
    const points = mountsUnder(roots);
    if (points.length === 0) break;
    for (const point of points) {
      const result = spawnSync('umount', [point], { stdio: 'ignore' });
      if (result.status === 0 || spawnSync('umount', ['-l', point], { stdio: 'ignore' }).status === 0) count += 1;
    }
  }
  return count;
}

/** Every cgroup directory of the suite's root, deepest first, over all mounted hierarchies. */
function cgroupDirs() {
  const dirs = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) if (entry.isDirectory()) walk(path.join(dir, entry.name));
    dirs.push(dir);
  };
  let hierarchies = [];
  try {
    hierarchies = fs.readdirSync(CGROUP_FS).map((h) => path.join(CGROUP_FS, h));
  } catch {
    // no cgroup file system
  }
  for (const h of [CGROUP_FS, ...hierarchies]) {
    const root = path.join(h, CGROUP_ROOT);
    if (fs.existsSync(root)) walk(root);
  }
  return dirs;
}

/** Creates the suite's cgroup root in every v1 hierarchy (the kubelet requires it to exist). */
export function createCgroupRoot() {
  for (const h of fs.readdirSync(CGROUP_FS)) {
    const dir = path.join(CGROUP_FS, h);
    if (!fs.existsSync(path.join(dir, 'cgroup.procs'))) continue;
    const root = path.join(dir, CGROUP_ROOT);
    fs.mkdirSync(root, { recursive: true });
    // A v1 cpuset cgroup starts with no CPUs nor memory nodes: give it its parent's.
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      const parent = readSetting(path.join(dir, file));
      if (parent && !readSetting(path.join(root, file))) fs.writeFileSync(path.join(root, file), parent);
    }
  }
}

const cgroupPids = () => {
  const pids = new Set();
  for (const dir of cgroupDirs()) {
    for (const line of (readSetting(path.join(dir, 'cgroup.procs')) ?? '').split('\n')) if (/^\d+$/.test(line)) pids.add(Number(line));
  }
  return [...pids];
};

/** Kills, by pid, every process left in the suite's cgroups, then removes the cgroups; returns the pids killed. */
export async function clearCgroups() {
  const killed = new Set();
  for (let pass = 0; pass < 20; pass += 1) {
    const pids = cgroupPids();
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // gone
      }
    }
    await sleep(250);
  }
  for (const dir of cgroupDirs()) {
    try {
      fs.rmdirSync(dir);
    } catch {
      // busy or gone: the next run's sweep tries again
    }
  }
  return [...killed];
}

/** Pids of the processes whose command line mentions `marker` (containerd's shims name its socket). */
export function pidsMentioning(marker) {
  const pids = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    if (processArgs(Number(entry)).some((arg) => arg.includes(marker))) pids.push(Number(entry));
  }
  return pids;
}

export function killPids(pids) {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The network namespace
// ---------------------------------------------------------------------------------------------

function ip(args) {
  const result = spawnSync('ip', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ip ${args.join(' ')} failed: ${result.stderr || result.error?.message}`);
  return result.stdout;
}

export const netnsPath = (name) => `/run/netns/${name}`;

/**
 * Creates the namespace: loopback up, the node address as a /32 on it (no dummy interface needed),
 * the service range routed to it (so the namespace's own processes reach ClusterIPs before
 * kube-proxy rewrites them). No interface to the machine, no default route.
 */
export function createNamespace(name, { nodeIp, serviceCidr }) {
  ip(['netns', 'add', name]);
  ip(['-n', name, 'link', 'set', 'lo', 'up']);
  ip(['-n', name, 'addr', 'add', `${nodeIp}/32`, 'dev', 'lo']);
  ip(['-n', name, 'route', 'add', serviceCidr, 'dev', 'lo', 'src', nodeIp]);
}

export function deleteNamespace(name) {
  if (!fs.existsSync(netnsPath(name))) return false;
  spawnSync('ip', ['netns', 'delete', name], { stdio: 'ignore' });
  if (fs.existsSync(netnsPath(name))) {
    spawnSync('umount', ['-l', netnsPath(name)], { stdio: 'ignore' });
    fs.rmSync(netnsPath(name), { force: true });
  }
  return true;
}

/** The routes of the namespace, for the check that nothing leads out of it. */
export const namespaceRoutes = (name) => ip(['-n', name, 'route', 'show', 'table', 'all']);

// ---------------------------------------------------------------------------------------------
// The run's record, and the sweep after a run that was killed
// ---------------------------------------------------------------------------------------------

export function readState() {
  try {
    return JSON.parse(fs.readFileSync(STATE_FILE, 'utf8'));
  } catch {
    return null;
  }
}

/** Merges `fields` into this run's record. */
export function recordState(fields) {
  fs.mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
  const state = { ...(readState() ?? {}), ...fields, owner: process.pid };
  fs.writeFileSync(`${STATE_FILE}.tmp`, JSON.stringify(state, null, 2));
  fs.renameSync(`${STATE_FILE}.tmp`, STATE_FILE);
}

export function forgetState() {
  fs.rmSync(STATE_FILE, { force: true });
}

/**
 * Undoes what a run recorded: its processes (by pid, when still the same program), its cgroups'
 * processes, mounts, namespace, the fixed paths and host settings. Used by teardown after the
 * daemons were stopped in order, and at start for a run that was killed. Returns what it did.
 */
export async function undo(state) {
  const done = [];
  for (const { pid, cmd } of state.pids ?? []) {
    if (isAlive(pid) && processArgs(pid)[0] === cmd) {
      killPids([pid]);
      done.push(`killed ${path.basename(cmd)} (pid ${pid})`);
    }
  }
  if (state.containerdSocket) {
    const shims = pidsMentioning(state.containerdSocket);
    killPids(shims);
    if (shims.length > 0) done.push(`killed ${shims.length} containerd shim(s)`);
  }
  const killed = await clearCgroups();
  if (killed.length > 0) done.push(`killed ${killed.length} process(es) left in the cluster's cgroups`);
  const roots = [state.workDir, state.containerdRoot, ...FIXED_PATHS].filter(Boolean);
  const unmounted = unmountUnder(roots);
  if (unmounted > 0) done.push(`unmounted ${unmounted} mount(s)`);
  if (state.netns && deleteNamespace(state.netns)) done.push(`deleted network namespace ${state.netns}`);
  const restored = restoreHostSettings(state.hostSettings);
  if (restored.length > 0) done.push(`restored ${restored.join(', ')}`);
  const removed = restoreFixedPaths(state.fixedPaths);
  if (removed.length > 0) done.push(`removed ${removed.length} path(s) the cluster left (${removed.slice(0, 4).join(', ')}${removed.length > 4 ? ', ...' : ''})`);
  if (state.workDir && !state.keepWorkDir) {
    if (mountsUnder([state.workDir]).length === 0) fs.rmSync(state.workDir, { recursive: true, force: true });
    else done.push(`kept ${state.workDir}: something is still mounted under it`);
  }
  return done;
}

/** At start: refuses when another run is alive, cleans up after one that was killed. */
export async function sweepLeftovers() {
  const state = readState();
  if (!state) return;
  if (state.owner && state.owner !== process.pid && isAlive(state.owner)) {
    throw new UserError(`another run of the Kubernetes suite (pid ${state.owner}) is using the test cluster's paths; wait for it or stop it first.`);
  }
  say(`cleaning up after an earlier run that did not finish (pid ${state.owner})`);
  for (const line of await undo(state)) say(`  ${line}`);
  forgetState();
}
