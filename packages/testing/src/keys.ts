import crypto from 'node:crypto';
import { PRINCIPALS, parsePrivateKey, parsePublicKey, type Principal, type PublicKeys, type Signer } from '@worklane/config';

/** 64 random hex characters: a WEBHOOK_SECRET_KEY for a test system. */
export function randomKey(): string {
  return crypto.randomBytes(32).toString('hex');
}

/** A short random suffix for names (databases, e-mail addresses, teams). */
export function randomId(bytes = 6): string {
  return crypto.randomBytes(bytes).toString('hex');
}

/** An Ed25519 key pair in PEM: PKCS#8 private key, SPKI public key. */
export interface SigningKeyPair {
  privateKey: string;
  publicKey: string;
}

/** One fresh Ed25519 key pair. */
export function signingKeyPair(): SigningKeyPair {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519', {
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKey, publicKey };
}

/** A key pair for every signing principal (gateway, console, issue, delivery, cli). */
export function signingKeyPairs(): Record<Principal, SigningKeyPair> {
  return Object.fromEntries(PRINCIPALS.map((principal) => [principal, signingKeyPair()])) as Record<Principal, SigningKeyPair>;
}

/** `principal` signing with its private key from `pairs` (or any other key given as PEM). */
export function signerOf(pairs: Record<Principal, SigningKeyPair>, principal: Principal): Signer {
  return { name: principal, key: parsePrivateKey(pairs[principal].privateKey) };
}

/** The public keys of `principals` from `pairs`, as a receiver holds them. */
export function publicKeysOf(pairs: Record<Principal, SigningKeyPair>, principals: readonly Principal[] = PRINCIPALS): PublicKeys {
  return Object.fromEntries(principals.map((principal) => [principal, parsePublicKey(pairs[principal].publicKey)]));
}
