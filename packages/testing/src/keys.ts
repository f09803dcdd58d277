import crypto from 'node:crypto';

/** 64 random hex characters: an IDENTITY_SIGNING_KEY or WEBHOOK_SECRET_KEY for a test system. */
export function randomKey(): string {
  return crypto.randomBytes(32).toString('hex');
}

/** A short random suffix for names (databases, e-mail addresses, teams). */
export function randomId(bytes = 6): string {
  return crypto.randomBytes(bytes).toString('hex');
}
