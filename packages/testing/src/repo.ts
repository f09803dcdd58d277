import fs from 'node:fs';
import path from 'node:path';

/**
 * The repository root: WORKLANE_REPO_ROOT when set (npm test sets it), else three levels above
 * this file (packages/testing/{src,dist}/).
 */
export function repoRoot(): string {
  const fromEnv = process.env.WORKLANE_REPO_ROOT;
  if (fromEnv) return path.resolve(fromEnv);
  return path.resolve(__dirname, '..', '..', '..');
}

/** Path of `node services/<name>/dist/main.js`. */
export function serviceMain(name: string): string {
  return path.join(repoRoot(), 'services', name, 'dist', 'main.js');
}

/** Path of the CLI entry point (`npx worklane`). */
export function cliPath(): string {
  return path.join(repoRoot(), 'tools', 'worklane', 'bin', 'worklane.mjs');
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Finds an executable: an explicit path, then <repo>/.cache/bin, then PATH. */
export function findExecutable(name: string, explicit?: string): string | null {
  if (explicit && isExecutable(explicit)) return path.resolve(explicit);
  const cached = path.join(repoRoot(), '.cache', 'bin', name);
  if (isExecutable(cached)) return cached;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}
