// PostgreSQL's server binaries (initdb, pg_ctl, postgres) of at least the minimum version: from
// PATH, then Debian's /usr/lib/postgresql/<version>/bin, newest first; installed with apt-get
// when none qualifies and we are root.
import fs from 'node:fs';
import path from 'node:path';

import { UserError, say, which } from '../util.mjs';
import { aptInstall, canUseApt } from './apt.mjs';
import { isExecutable } from './cache.mjs';
import { atLeast, formatVersion, probeVersion } from './version.mjs';
import { TOOLS } from './versions.mjs';

const { minimum, aptPackage } = TOOLS.postgres;
const BINARIES = ['initdb', 'pg_ctl', 'postgres'];

function candidateDirs(env) {
  const dirs = [];
  const onPath = which('pg_ctl', [], env);
  if (onPath) dirs.push(path.dirname(fs.realpathSync(onPath)), path.dirname(onPath));
  try {
    const versions = fs
      .readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) dirs.push(path.join('/usr/lib/postgresql', v, 'bin'));
  } catch {
    // no Debian-style installation
  }
  return [...new Set(dirs)];
}

/** The first directory holding all three binaries at the minimum version or newer; logs each one skipped. */
export function findPostgres(env = process.env) {
  for (const dir of candidateDirs(env)) {
    if (!BINARIES.every((b) => isExecutable(path.join(dir, b)))) continue;
    const version = probeVersion(path.join(dir, 'postgres'));
    if (atLeast(version, minimum)) return { binDir: dir, version: formatVersion(version) };
    say(`PostgreSQL ${formatVersion(version)} in ${dir} is older than the ${minimum} Worklane needs: skipping it`);
  }
  return null;
}

const withPaths = (found) => ({
  ...found,
  initdb: path.join(found.binDir, 'initdb'),
  pgCtl: path.join(found.binDir, 'pg_ctl'),
  postgres: path.join(found.binDir, 'postgres'),
});

let found = null;

/** {binDir, version, initdb, pgCtl, postgres}, installing Debian's postgresql when needed. */
export async function ensurePostgres() {
  if (found) return found;
  let result = findPostgres();
  if (!result && canUseApt()) {
    say(`PostgreSQL ${minimum}+ server binaries not found: installing Debian's ${aptPackage} (apt-get)`);
    await aptInstall([aptPackage]);
    result = findPostgres();
  }
  if (!result) {
    throw new UserError(
      `PostgreSQL ${minimum} or newer (initdb, pg_ctl, postgres) was not found on PATH or under /usr/lib/postgresql/*/bin.\n` +
        `Install it with \`sudo apt-get install -y ${aptPackage}\` (Debian/Ubuntu), or point DATABASE_URL at a server.`,
    );
  }
  found = withPaths(result);
  return found;
}
