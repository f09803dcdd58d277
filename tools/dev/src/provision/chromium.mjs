// Chromium for the console's browser tests: WORKLANE_CHROMIUM_BIN, then PATH; Debian's chromium
// package when none is recent enough and we are root; otherwise the one command to run.
import { UserError, say, which } from '../util.mjs';
import { aptInstall, canUseApt } from './apt.mjs';
import { isExecutable } from './cache.mjs';
import { atLeast, formatVersion, probeVersion } from './version.mjs';
import { TOOLS } from './versions.mjs';

const { minimum, aptPackage } = TOOLS.chromium;
const NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

export function findChromium(env = process.env) {
  const candidates = [env.WORKLANE_CHROMIUM_BIN, ...NAMES.map((n) => which(n, [], env))].filter(Boolean);
  for (const bin of new Set(candidates)) {
    if (!isExecutable(bin)) continue;
    const version = probeVersion(bin, ['--version'], env);
    if (atLeast(version, minimum)) return { bin, version: formatVersion(version) };
    say(`Chromium ${formatVersion(version)} at ${bin} is older than the ${minimum} the browser tests need: skipping it`);
  }
  return null;
}

export async function ensureChromium() {
  let found = findChromium();
  if (!found && canUseApt()) {
    say(`Chromium ${minimum}+ not found: installing Debian's ${aptPackage} (apt-get)`);
    await aptInstall([aptPackage]);
    found = findChromium();
  }
  if (!found) {
    throw new UserError(
      `The console's browser tests need Chromium ${minimum} or newer. Install it with:\n` +
        `  sudo apt-get install -y ${aptPackage}\n(or set WORKLANE_CHROMIUM_BIN to a Chromium or Chrome binary).`,
    );
  }
  return found;
}
