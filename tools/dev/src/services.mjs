// What only the dev runner needs: where a service's entry point is and the keys of `npm start`.
// The service table and the wiring between services are packages/testing/src/services.ts, one
// definition for `npm start` and the tests; `loadWiring()` reads it once the build has run.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { repoRoot } from './util.mjs';

export function mainFile(name, root = repoRoot) {
  return path.join(root, 'services', name, 'dist', 'main.js');
}

/** SERVICES, START_ORDER, stopStages(), defaultPorts() and serviceEnv() from the built @worklane/testing. */
export async function loadWiring() {
  const { SERVICES, START_ORDER, stopStages, defaultPorts, serviceEnv } = await import('@worklane/testing');
  return { SERVICES, START_ORDER, stopStages, defaultPorts, serviceEnv };
}

const randomKey = () => crypto.randomBytes(32).toString('hex');

/** The principals that sign internal calls, each with its own Ed25519 key pair (@worklane/config, built). */
const signingPrincipals = () => createRequire(import.meta.url)('@worklane/config').PRINCIPALS;

function signingKeyPair() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519', {
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKey, publicKey };
}

const isPair = (pair) => typeof pair?.privateKey === 'string' && typeof pair?.publicKey === 'string';

/**
 * The keys of `npm start`, generated once and kept in <repo>/.worklane/dev-keys.json (mode 600):
 * an Ed25519 key pair per signing principal (each service gets only its own private key) and
 * WEBHOOK_SECRET_KEY, which the environment may override.
 */
export function loadDevKeys(root = repoRoot, env = process.env) {
  const file = path.join(root, '.worklane', 'dev-keys.json');
  let stored = {};
  try {
    stored = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // first run
  }
  const signing = { ...(stored.signing ?? {}) };
  const missing = signingPrincipals().filter((principal) => !isPair(signing[principal]));
  if (missing.length > 0 || !stored.webhookSecretKey) {
    for (const principal of missing) signing[principal] = signingKeyPair();
    stored = { signing, webhookSecretKey: stored.webhookSecretKey || randomKey() };
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  }
  return {
    signing,
    webhookSecretKey: env.WEBHOOK_SECRET_KEY || stored.webhookSecretKey,
  };
}
