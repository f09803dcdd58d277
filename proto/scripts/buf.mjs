// The buf binary and the environment to run it in, for the proto tests and the release script.
// buf comes from the repository's one provisioning path (tools/dev/src/provision): WORKLANE_BUF_BIN,
// PATH, .cache/bin or the user's cache at the pinned version, else `go install` from the Go
// module proxy (about a minute and a half on 2 cores, once per machine). `npm test` provisions it
// before the tests and passes WORKLANE_BUF_BIN.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { repoCacheDir } from '../../tools/dev/src/provision/cache.mjs';
import { GO_TOOLS, ensureGoTool } from '../../tools/dev/src/provision/go-tools.mjs';

export const protoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
/** One image per release (MAJOR.MINOR.PATCH.json), written by scripts/release-image.mjs. */
export const releasesDir = join(protoRoot, 'releases');

/** The release images in dir, oldest first (versions compared as numbers: 0.10.0 after 0.9.0). */
export function releaseImages(dir = releasesDir) {
  const parse = (file) => file.slice(0, -'.json'.length).split('.').map(Number);
  return readdirSync(dir)
    .filter((file) => /^\d+\.\d+\.\d+\.json$/.test(file))
    .sort((a, b) => {
      const [x, y] = [parse(a), parse(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    })
    .map((file) => join(dir, file));
}

/**
 * Whether `version` has been released: CHANGELOG.md has its section (`## [1.4.0] - 2027-03-01`).
 * A released version's image is final; the image of the version being prepared may be refreshed
 * until its section is written.
 */
export function isReleased(version, changelog) {
  const escaped = version.replace(/\./g, '\\.');
  return new RegExp(`^## \\[${escaped}\\]`, 'm').test(changelog);
}

/** The path of a buf at the pinned version (found, or built). */
export async function findBuf() {
  return (await ensureGoTool(GO_TOOLS.buf)).bin;
}

/** buf keeps its cache with the repository's other tools (it never reaches the network here: no remote dependencies). */
export function bufEnv(env = process.env) {
  return { ...env, BUF_CACHE_DIR: join(repoCacheDir, 'buf') };
}

/** Runs buf in cwd; {status, stdout, stderr}, never throwing on a non-zero exit. */
export function runBuf(bin, args, cwd) {
  const result = spawnSync(bin, args, { cwd, env: bufEnv(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
