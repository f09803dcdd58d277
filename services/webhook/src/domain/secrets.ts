import { randomBytes } from 'node:crypto';
import type { AnswerSeal } from '@worklane/http';
import type { SecretBox } from '@worklane/webhooks';
import { newEd25519Key } from '@worklane/webhooks/signing';

/**
 * What a sealed value is: an HMAC signing secret (current or previous), an ed25519 seed, or an
 * answer kept for its Idempotency-Key (a rotation's holds the new secret).
 */
export type SealedKind = 'secret' | 'ed25519' | 'answer';

/**
 * A sealed value opens only for the team and the kind it was sealed for, so a sealed value copied
 * onto another team's webhook, or from the secret column to the key column, is useless.
 */
const CONTEXTS: Record<SealedKind, (teamId: number) => string> = {
  secret: (teamId) => `webhook-secret:team:${teamId}`,
  ed25519: (teamId) => `webhook-ed25519:team:${teamId}`,
  answer: (teamId) => `webhook-idempotent-answer:team:${teamId}`,
};

export const sealSecret = (box: SecretBox, secret: string, teamId: number, kind: SealedKind = 'secret') => box.seal(secret, CONTEXTS[kind](teamId));

export const openSecret = (box: SecretBox, sealed: string, teamId: number, kind: SealedKind = 'secret') => box.open(sealed, CONTEXTS[kind](teamId));

/** The service's answers kept for an Idempotency-Key, stored sealed like its secrets. */
export const answerSeal = (box: SecretBox): AnswerSeal => ({
  seal: (body, teamId) => sealSecret(box, body, teamId, 'answer'),
  open: (sealed, teamId) => openSecret(box, sealed, teamId, 'answer'),
});

/** Bytes of randomness in a generated secret: 256 bits, as the HMAC-SHA256 key's own size. */
const GENERATED_SECRET_BYTES = 32;

/**
 * A secret for a rotation that names none: 43 URL-safe characters. Like every secret it is used
 * as its UTF-8 bytes (docs/webhook-signatures.md says how a Standard Webhooks library takes it).
 */
export const generateSecret = () => randomBytes(GENERATED_SECRET_BYTES).toString('base64url');

/** A new ed25519 key of a team's webhook: the seed sealed, the public key (`whpk_...`) in clear. */
export function newSealedEd25519Key(box: SecretBox, teamId: number): { sealed: string; publicKey: string } {
  const key = newEd25519Key();
  return { sealed: sealSecret(box, key.privateKey, teamId, 'ed25519'), publicKey: key.publicKey };
}
