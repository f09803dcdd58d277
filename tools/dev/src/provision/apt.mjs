// Debian packages, installed as root with apt-get when a tool is missing. Installs run one at a
// time (apt holds a lock), and no package's post-install script may start a system service.
import fs from 'node:fs';

import { runChecked, which } from '../util.mjs';

export const canUseApt = () => typeof process.getuid === 'function' && process.getuid() === 0 && which('apt-get') !== null;

let queue = Promise.resolve();
let updated = false;

/** apt-get install -y --no-install-recommends packages (after one apt-get update per process). */
export function aptInstall(packages) {
  const run = queue.then(async () => {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const policy = '/usr/sbin/policy-rc.d';
    const addedPolicy = !fs.existsSync(policy);
    if (addedPolicy) fs.writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
    try {
      if (!updated) {
        await runChecked('apt-get', ['update', '-qq'], { env });
        updated = true;
      }
      await runChecked('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { env });
    } finally {
      if (addedPolicy) fs.rmSync(policy, { force: true });
    }
  });
  queue = run.catch(() => undefined);
  return run;
}
