// Part of phase (b): the images of the test cluster's data services, PostgreSQL and nats-server
// (tools/images/test-cluster), built with buildah. No registry is reachable, so the Debian image
// their Dockerfiles start from is made here too, by mmdebstrap from Debian's own mirror, and
// tagged with the name the Dockerfiles expect (as the Node base image of the service images is).
//
// Every image carries, in its tag or in a label, a hash of exactly what it is made of: the Debian
// image of its recipe and mirrors; each data image of its folder's files, the Debian image's key
// and (NATS) the nats-server binary. A run over unchanged inputs builds nothing.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { commitDebianImage } from '../../dev/src/provision/node-base-image.mjs';
import { TOOLS } from '../../dev/src/provision/versions.mjs';
import { repoRoot, run, say } from '../../dev/src/util.mjs';
import { retrySetUp, runLogged, tailOf } from './commands.mjs';

const DEFINITIONS = path.join(repoRoot, 'tools', 'images', 'test-cluster');
const KEY_LABEL = 'org.worklane.base-image.key';
/** Bumped when the way the Debian image is made changes. */
const DEBIAN_RECIPE = 1;
export const DATA_IMAGE_REPOSITORY = 'localhost/worklane-test';

const sha256 = (data) => createHash('sha256').update(data).digest('hex');

/** The image a Dockerfile's `ARG DEBIAN_IMAGE=` default names, fully qualified (debian:x -> docker.io/library/debian:x). */
export function debianImageName(dockerfileText) {
  const short = /^ARG DEBIAN_IMAGE=(\S+)/m.exec(dockerfileText)?.[1];
  if (!short) throw new Error('a data image Dockerfile has no `ARG DEBIAN_IMAGE=<image>` default');
  const [first, ...rest] = short.split('/');
  if (rest.length > 0 && /[.:]|^localhost$/.test(first)) return short;
  return `docker.io/${rest.length === 0 ? `library/${short}` : short}`;
}

/** The files of a definition folder, sorted, with their contents: what the image's tag hashes. */
function definitionFiles(name) {
  const dir = path.join(DEFINITIONS, name);
  return fs
    .readdirSync(dir)
    .sort()
    .map((file) => ({ file, path: path.join(dir, file), text: fs.readFileSync(path.join(dir, file)) }));
}

async function imageLabel(buildah, name, label) {
  const result = await run(buildah.bin, ['inspect', '--type', 'image', name], { env: buildah.env });
  if (result.code !== 0) return null;
  try {
    return JSON.parse(result.stdout).OCIv1?.config?.Labels?.[label] ?? null;
  } catch {
    return null;
  }
}

/** The Debian image (minbase, the mirrors of the Node base image), made unless buildah has it with the same key; resolves {name, key}. */
async function ensureDebianImage(buildah, name, log) {
  const { suite, mirror, securityMirror } = TOOLS.nodeBaseImage;
  const key = sha256(JSON.stringify({ recipe: DEBIAN_RECIPE, suite, mirror, securityMirror })).slice(0, 16);
  if ((await imageLabel(buildah, name, KEY_LABEL)) === key) return { name, key };
  log(`making ${name} (Debian ${suite} minbase by mmdebstrap)`);
  const started = Date.now();
  await commitDebianImage(buildah, name, {
    suite,
    mirror,
    securityMirror,
    config: ['--cmd', 'bash', '--label', `${KEY_LABEL}=${key}`, '--label', `org.opencontainers.image.description=Debian ${suite} minbase, made locally for the Kubernetes suite`],
  });
  if ((await imageLabel(buildah, name, KEY_LABEL)) !== key) throw new Error(`${name} was committed but buildah does not show it`);
  log(`made ${name} in ${Math.round((Date.now() - started) / 1000)} s`);
  return { name, key };
}

/**
 * Builds the PostgreSQL and NATS images unless buildah has them; resolves
 * {images: {postgres, nats}, built: [names built]}. `natsServer` is the provisioned nats-server
 * ({bin, version}).
 */
export async function buildDataImages({ buildah, natsServer, workDir, log = say }) {
  const definitions = {
    postgres: { files: definitionFiles('postgres'), extra: [] },
    nats: { files: definitionFiles('nats'), extra: [{ file: 'nats-server', path: natsServer.bin, mode: 0o755 }] },
  };
  const dockerfileOf = (d) => d.files.find((f) => f.file === 'Dockerfile').text.toString('utf8');
  const debianNames = new Set(Object.values(definitions).map((d) => debianImageName(dockerfileOf(d))));
  if (debianNames.size !== 1) throw new Error(`the data images start from different Debian images: ${[...debianNames].join(', ')}`);
  const debian = await ensureDebianImage(buildah, [...debianNames][0], log);

  const images = {};
  const built = [];
  for (const [name, definition] of Object.entries(definitions)) {
    const hash = createHash('sha256');
    hash.update(`debian ${debian.key}\n`);
    for (const f of definition.files) hash.update(`${f.file} ${sha256(f.text)}\n`);
    for (const f of definition.extra) hash.update(`${f.file} ${sha256(fs.readFileSync(f.path))}\n`);
    const image = `${DATA_IMAGE_REPOSITORY}/${name}:${hash.digest('hex').slice(0, 12)}`;
    images[name] = image;
    const exists = await run(buildah.bin, ['inspect', '--type', 'image', image], { env: buildah.env });
    if (exists.code === 0) continue;

    const context = path.join(workDir, `data-image-${name}`);
    fs.rmSync(context, { recursive: true, force: true });
    fs.mkdirSync(context, { recursive: true });
    for (const f of definition.files) fs.copyFileSync(f.path, path.join(context, f.file));
    for (const f of definition.extra) {
      fs.copyFileSync(f.path, path.join(context, f.file));
      fs.chmodSync(path.join(context, f.file), f.mode);
    }
    const logFile = path.join(workDir, `build-${name}.log`);
    const started = Date.now();
    // The PostgreSQL build reaches Debian's mirror: a build that fails for a dropped connection is tried again.
    await retrySetUp(
      `building the ${name} image`,
      async () => {
        const code = await runLogged(
          buildah.bin,
          [
            'bud',
            '--pull-never',
            '--network=host',
            '--isolation=oci',
            `--signature-policy=${buildah.signaturePolicy}`,
            `--build-arg=DEBIAN_IMAGE=${debian.name}`,
            `--tag=${image}`,
            '.',
          ],
          { log: logFile, env: buildah.env, cwd: context, timeoutMs: 20 * 60_000 },
        );
        if (code !== 0) throw new Error(`the ${name} image did not build (exit ${code}); ${logFile} ends:\n${tailOf(logFile, 40)}`);
      },
      { say: log },
    );
    fs.rmSync(context, { recursive: true, force: true });
    log(`built ${image} in ${Math.round((Date.now() - started) / 1000)} s`);
    built.push(image);
    await removeOtherTags(buildah, `${DATA_IMAGE_REPOSITORY}/${name}:`, image);
  }
  return { images, built };
}

/** Removes older tags of one data image from buildah's storage. */
async function removeOtherTags(buildah, prefix, keep) {
  const { stdout } = await run(buildah.bin, ['images', '--format', '{{.Name}}:{{.Tag}}'], { env: buildah.env });
  const stale = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((name) => name.startsWith(prefix) && name !== keep);
  if (stale.length > 0) await run(buildah.bin, ['rmi', ...stale], { env: buildah.env });
}
