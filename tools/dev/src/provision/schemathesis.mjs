// schemathesis, the API fuzzer the contract tests run (tools/contract-tests), from PyPI at the pinned
// version, in a virtualenv of its own in the user's cache (~/.cache/worklane/schemathesis/<version>),
// made once per machine and reused by every clone. WORKLANE_SCHEMATHESIS_BIN names another `st`.
// Python 3 with venv comes from the machine, or from Debian's python3-venv when we are root.
import fs from 'node:fs';
import path from 'node:path';

import { UserError, runChecked, say, which } from '../util.mjs';
import { aptInstall, canUseApt } from './apt.mjs';
import { isExecutable, userCacheDir } from './cache.mjs';
import { atLeast, formatVersion, probeVersion } from './version.mjs';
import { TOOLS } from './versions.mjs';

const { pinned, minimum } = TOOLS.schemathesis;
const python = TOOLS.python;
/** Written last: a virtualenv without it was left half made and is made again. */
const COMPLETE = '.worklane-complete';

export const schemathesisVenv = (env = process.env) => path.join(userCacheDir(env), 'schemathesis', pinned);

/** A Python 3 recent enough, with its venv module; null when there is none. */
export function findPython(env = process.env) {
  for (const name of ['python3', 'python']) {
    const bin = which(name, [], env);
    if (!bin) continue;
    const version = probeVersion(bin, ['--version'], env);
    if (!atLeast(version, python.minimum)) {
      say(`${name} ${formatVersion(version)} at ${bin} is older than the ${python.minimum} schemathesis needs: skipping it`);
      continue;
    }
    if (probeVersion(bin, ['-c', 'import venv, ensurepip, sys; print(sys.version)'], env) === null) {
      say(`${name} at ${bin} has no venv/ensurepip module: skipping it`);
      continue;
    }
    return { bin, version: formatVersion(version) };
  }
  return null;
}

/** The `st` already provisioned (override or the user cache), if usable; else null. */
export function findSchemathesis(env = process.env) {
  const override = env.WORKLANE_SCHEMATHESIS_BIN;
  if (override && isExecutable(override)) {
    const version = probeVersion(override, ['--version'], env);
    if (atLeast(version, minimum)) return { bin: path.resolve(override), version: formatVersion(version), from: 'WORKLANE_SCHEMATHESIS_BIN' };
    say(`schemathesis ${formatVersion(version)} at ${override} is older than ${minimum}: skipping it, using the pinned ${pinned}`);
  }
  const venv = schemathesisVenv(env);
  const bin = path.join(venv, 'bin', 'st');
  if (fs.existsSync(path.join(venv, COMPLETE)) && isExecutable(bin)) {
    const version = probeVersion(bin, ['--version'], env);
    if (formatVersion(version) === pinned) return { bin, version: pinned, from: 'the user cache' };
  }
  return null;
}

/** schemathesis at the pinned version: found, or installed from PyPI into its virtualenv. */
export async function ensureSchemathesis(env = process.env) {
  const found = findSchemathesis(env);
  if (found) return found;

  let interpreter = findPython(env);
  if (!interpreter && canUseApt()) {
    say(`Python ${python.minimum}+ with venv not found: installing Debian's ${python.aptPackages.join(' ')} (apt-get)`);
    await aptInstall(python.aptPackages);
    interpreter = findPython(env);
  }
  if (!interpreter) {
    throw new UserError(
      `The contract tests run schemathesis, which needs Python ${python.minimum} or newer with venv. Install it with:\n` +
        `  sudo apt-get install -y ${python.aptPackages.join(' ')}\n(or set WORKLANE_SCHEMATHESIS_BIN to a schemathesis ${minimum}+ \`st\`).`,
    );
  }

  const venv = schemathesisVenv(env);
  say(`schemathesis ${pinned}: installing from PyPI into ${venv} (Python ${interpreter.version})`);
  fs.rmSync(venv, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(venv), { recursive: true });
  try {
    await runChecked(interpreter.bin, ['-m', 'venv', venv], { env });
    await runChecked(path.join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', `schemathesis==${pinned}`], { env });
  } catch (error) {
    fs.rmSync(venv, { recursive: true, force: true });
    throw new UserError(`Installing schemathesis ${pinned} from PyPI failed: ${error instanceof Error ? error.message : error}`);
  }
  fs.writeFileSync(path.join(venv, COMPLETE), `${pinned}\n`);
  const installed = findSchemathesis({ ...env, WORKLANE_SCHEMATHESIS_BIN: '' });
  if (!installed) throw new UserError(`schemathesis ${pinned} was installed into ${venv}, but its \`st\` does not report that version`);
  return { ...installed, from: 'PyPI' };
}
