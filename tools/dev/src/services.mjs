// What only the dev runner needs: where a service's entry point is and the keys of `npm start`.
// The service table and the wiring between services are packages/testing/src/services.ts, one
// definition for `npm start` and the tests; `loadWiring()` reads it once the build has run.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { repoRoot } from './util.mjs';

export function mainFile(name, root = repoRoot) {
  return path.join(root, 'services', name, 'dist', 'main.js');
}

/** SERVICES, START_ORDER, defaultPorts() and serviceEnv() from the built @worklane/testing. */
export async function loadWiring() {
  const { SERVICES, START_ORDER, defaultPorts, serviceEnv } = await import('@worklane/testing');
  return { SERVICES, START_ORDER, defaultPorts, serviceEnv };
}

const randomKey = () => crypto.randomBytes(32).toString('hex');

/**
 * The keys of `npm start`, generated once and kept in <repo>/.worklane/dev-keys.json (mode 600);
 * IDENTITY_SIGNING_KEY / WEBHOOK_SECRET_KEY in the environment win.
 */
export function loadDevKeys(root = repoRoot, env = process.env) {
  const file = path.join(root, '.worklane', 'dev-keys.json');
  let stored = {};
  try {
    stored = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // first run
  }
  if (!stored.identitySigningKey || !stored.webhookSecretKey) {
    stored = {
      identitySigningKey: stored.identitySigningKey || randomKey(),
      webhookSecretKey: stored.webhookSecretKey || randomKey(),
    };
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  }
  return {
    identitySigningKey: env.IDENTITY_SIGNING_KEY || stored.identitySigningKey,
    webhookSecretKey: env.WEBHOOK_SECRET_KEY || stored.webhookSecretKey,
  };
}
