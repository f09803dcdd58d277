// Phase (b): the service images, built with buildah from the repository's one Dockerfile
// (tools/images/Dockerfile, the service as its SERVICE build argument), unchanged, on the Node base
// image made locally (provision/node-base-image.mjs).
//
// What is built is a snapshot of the working tree (tracked files and untracked ones git does not
// ignore), taken through a temporary git index so the real one is never touched, or a given git
// revision (WORKLANE_K8S_SOURCE). Of that snapshot, the build context holds only what the images
// are made of (imageInputs: the root files the build reads, the Dockerfile, and every workspace
// the services and the CLI depend on), and the images are tagged by a hash of exactly those
// paths: a run over the same image sources finds them in buildah's storage and builds nothing,
// whatever changed in tests, tools, docs or the chart. Builds use the
// machine's network (they need the npm registry and Debian's mirrors); npm inside them trusts the
// same CA bundle as the machine, mounted into each RUN step and never stored in an image.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { userCacheDir } from '../../dev/src/provision/cache.mjs';
import { repoRoot, run, runChecked, say } from '../../dev/src/util.mjs';
import { retrySetUp, runLogged, runLoggedChecked, tailOf } from './commands.mjs';

export const IMAGE_REGISTRY = 'localhost';
export const IMAGE_NAMESPACE = 'worklane';

/** The services, in the order of docker-bake.hcl's default group (generated from the service table). */
export function serviceNames() {
  const bake = fs.readFileSync(path.join(repoRoot, 'docker-bake.hcl'), 'utf8');
  const list = /group "default" \{\s*targets\s*=\s*\[([^\]]*)\]/.exec(bake)?.[1];
  const names = [...(list ?? '').matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  if (names.length === 0) throw new Error('docker-bake.hcl lists no service in its default group');
  return names;
}

export const imageName = (service, tag) => `${IMAGE_REGISTRY}/${IMAGE_NAMESPACE}/${service}:${tag}`;

/**
 * The tree to build: {tree, label}. Without a revision, the working tree as `git add -A` would
 * stage it, written to a throwaway index (the real index, HEAD and the work tree are untouched).
 */
export async function sourceTree(revision = process.env.WORKLANE_K8S_SOURCE) {
  const git = (args, env = process.env) => runChecked('git', args, { cwd: repoRoot, env });
  if (revision) {
    const { stdout } = await git(['rev-parse', `${revision}^{tree}`]);
    return { tree: stdout.trim(), label: `git revision ${revision}` };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wl-index-'));
  try {
    const index = path.join(dir, 'index');
    const { stdout: realIndex } = await git(['rev-parse', '--git-path', 'index']);
    // Starting from a copy of the real index only saves hashing unchanged files again.
    if (fs.existsSync(path.resolve(repoRoot, realIndex.trim()))) fs.copyFileSync(path.resolve(repoRoot, realIndex.trim()), index);
    const env = { ...process.env, GIT_INDEX_FILE: index };
    await git(['add', '--all', '--', '.'], env);
    const { stdout } = await git(['write-tree'], env);
    return { tree: stdout.trim(), label: 'the working tree' };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Files at the repository's root that an image build reads (the workspaces' layout, the lockfile, turbo's and TypeScript's settings). */
const ROOT_INPUTS = ['.dockerignore', 'package.json', 'package-lock.json', 'turbo.json', 'tsconfig.base.json', 'tools/images/Dockerfile'];

/**
 * The paths of `tree` the images are made of: ROOT_INPUTS and the folder of every workspace that
 * a service or the CLI (which every image carries) depends on, followed through the @worklane
 * dependencies of the tree's package.json files, as `turbo prune` follows them. Resolves
 * {paths, hash}: the hash covers exactly those paths' contents.
 */
export async function imageInputs(tree) {
  const git = (args) => runChecked('git', args, { cwd: repoRoot });
  const listed = (await git(['ls-tree', '-r', '--name-only', tree])).stdout.split('\n');
  const workspaces = new Map();
  for (const manifest of listed.filter((f) => /^(proto|(packages|services|tools)\/[^/]+)\/package\.json$/.test(f))) {
    const pkg = JSON.parse((await git(['show', `${tree}:${manifest}`])).stdout);
    const deps = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies, ...pkg.peerDependencies }).filter((name) => name.startsWith('@worklane/'));
    workspaces.set(pkg.name, { dir: path.posix.dirname(manifest), deps });
  }
  const wanted = [...workspaces].filter(([, w]) => w.dir.startsWith('services/')).map(([name]) => name);
  wanted.push('@worklane/cli');
  const dirs = new Set();
  for (let name = wanted.pop(); name; name = wanted.pop()) {
    const workspace = workspaces.get(name);
    if (!workspace) throw new Error(`the image sources need ${name}, which no package.json of the tree names`);
    if (dirs.has(workspace.dir)) continue;
    dirs.add(workspace.dir);
    wanted.push(...workspace.deps);
  }
  const present = new Set(listed);
  const paths = [...ROOT_INPUTS.filter((f) => present.has(f)), ...[...dirs].sort()];
  const { stdout } = await git(['ls-tree', tree, '--', ...paths]);
  return { paths, hash: createHash('sha256').update(stdout).digest('hex') };
}

/** The CA bundle the machine trusts, for npm inside the builds; null when there is none to pass. */
function caBundle() {
  for (const file of [process.env.NODE_EXTRA_CA_CERTS, process.env.SSL_CERT_FILE, '/etc/ssl/certs/ca-certificates.crt']) {
    if (file && fs.existsSync(file)) return file;
  }
  return null;
}

async function imageExists(buildah, name) {
  const { code } = await run(buildah.bin, ['inspect', '--type', 'image', name], { env: buildah.env });
  return code === 0;
}

/**
 * Builds every service image for the source tree, unless all are already in buildah's storage.
 * Resolves {tag, images: {service: name}, built: [services built]}.
 */
export async function buildServiceImages({ buildah, baseImage, workDir, services = serviceNames(), log = say }) {
  const source = await sourceTree();
  const inputs = await imageInputs(source.tree);
  const tag = `src-${inputs.hash.slice(0, 12)}`;
  const images = Object.fromEntries(services.map((s) => [s, imageName(s, tag)]));
  const missing = [];
  for (const service of services) if (!(await imageExists(buildah, images[service]))) missing.push(service);
  log(
    `sources: ${source.label} (tree ${source.tree.slice(0, 12)}, ${inputs.paths.length} image inputs); images ${imageName('<service>', tag)}; ${missing.length === 0 ? 'all built before' : `to build: ${missing.join(', ')}`}`,
  );
  if (missing.length === 0) return { tag, images, built: [] };

  const context = path.join(workDir, 'image-context');
  fs.mkdirSync(context, { recursive: true });
  const archive = path.join(workDir, 'image-context.tar');
  await runChecked('git', ['archive', '--format=tar', `--output=${archive}`, source.tree, '--', ...inputs.paths], { cwd: repoRoot });
  await runChecked('tar', ['-xf', archive, '-C', context]);
  fs.rmSync(archive, { force: true });

  // turbo's cache of the builds inside the images, kept on the machine: the seven builds share most
  // packages, and a later run rebuilds only what changed. Mounted for the RUN steps, never stored.
  const turboCache = path.join(userCacheDir(), 'image-turbo');
  fs.mkdirSync(turboCache, { recursive: true });
  const volumes = ['-v', `${turboCache}:/app/.turbo/cache`];
  const ca = caBundle();
  if (ca) {
    const npmrc = path.join(workDir, 'build-npmrc');
    const registry = (await run('npm', ['config', 'get', 'registry'], { cwd: os.tmpdir() })).stdout.trim() || 'https://registry.npmjs.org/';
    fs.writeFileSync(npmrc, `registry=${registry}\ncafile=/etc/ssl/certs/ca-certificates.crt\n`);
    volumes.push('-v', `${ca}:/etc/ssl/certs/ca-certificates.crt:ro`, '-v', `${npmrc}:/usr/local/etc/npmrc:ro`);
  }
  const built = [];
  for (const service of missing) {
    const logFile = path.join(workDir, `build-${service}.log`);
    const started = Date.now();
    // A build reaches the npm registry and Debian's mirrors: one that fails (a dropped connection)
    // is tried again, up to three times; its log keeps every attempt.
    await retrySetUp(
      `building the ${service} image`,
      async () => {
        const code = await runLogged(
          buildah.bin,
          [
            'bud',
            '--layers',
            '--pull-never',
            '--network=host',
            '--isolation=oci',
            `--signature-policy=${buildah.signaturePolicy}`,
            `--build-arg=NODE_IMAGE=${baseImage}`,
            `--build-arg=SERVICE=${service}`,
            ...volumes,
            '--file=tools/images/Dockerfile',
            `--tag=${images[service]}`,
            '--label=org.opencontainers.image.version=' + tag,
            '.',
          ],
          { log: logFile, env: buildah.env, cwd: context, timeoutMs: 30 * 60_000 },
        );
        if (code !== 0) throw new Error(`the ${service} image did not build (exit ${code}); ${logFile} ends:\n${tailOf(logFile, 40)}`);
      },
      { say: log },
    );
    log(`built ${images[service]} in ${Math.round((Date.now() - started) / 1000)} s`);
    built.push(service);
  }
  fs.rmSync(context, { recursive: true, force: true });
  await removeOtherTags(buildah, services, tag);
  return { tag, images, built };
}

/** Removes the project's service images of other tags from buildah's storage (the layer cache stays). */
async function removeOtherTags(buildah, services, keepTag) {
  const { stdout } = await run(buildah.bin, ['images', '--format', '{{.Name}}:{{.Tag}}'], { env: buildah.env });
  const prefixes = services.map((s) => `${IMAGE_REGISTRY}/${IMAGE_NAMESPACE}/${s}:`);
  const stale = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((name) => prefixes.some((p) => name.startsWith(p)) && !name.endsWith(`:${keepTag}`));
  if (stale.length > 0) await run(buildah.bin, ['rmi', ...stale], { env: buildah.env });
}

/** Writes the image to a docker-archive tar at file (for `ctr images import`). */
export async function exportImage(buildah, name, file, log) {
  await runLoggedChecked(buildah.bin, ['push', `--signature-policy=${buildah.signaturePolicy}`, name, `docker-archive:${file}:${name}`], { log, env: buildah.env });
}
