// Where provisioned tools live: <repo>/.cache (this clone), and the user's cache, which keeps what
// was built or downloaded once per machine so that another clone copies it instead of building again.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { repoRoot } from '../util.mjs';

export const repoCacheDir = path.join(repoRoot, '.cache');
export const cacheBinDir = path.join(repoCacheDir, 'bin');

/** ${XDG_CACHE_HOME:-~/.cache}/worklane */
export function userCacheDir(env = process.env) {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'worklane');
}

export function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Copies src to dest through a temporary name, so that a reader never sees half a file. */
export function copyAtomically(src, dest) {
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  const tmp = `${dest}.tmp.${process.pid}`;
  fs.copyFileSync(src, tmp);
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, dest);
}

/** Copies a binary built on this machine before (user cache) into .cache/bin; returns its path or null. */
export function fromUserCache(name, version) {
  const cached = path.join(userCacheDir(), 'bin', `${name}-${version}`);
  if (!isExecutable(cached)) return null;
  const dest = path.join(cacheBinDir, name);
  copyAtomically(cached, dest);
  return dest;
}

/** Keeps a copy of a freshly built .cache/bin binary in the user cache (best effort). */
export function toUserCache(name, version) {
  try {
    copyAtomically(path.join(cacheBinDir, name), path.join(userCacheDir(), 'bin', `${name}-${version}`));
  } catch {
    // a read-only home only costs a rebuild in the next clone
  }
}
