// Signing keys of internal calls. Every principal that signs (the gateway and the console for the
// caller identities they mint, issue and delivery for their gRPC calls, the operator CLI) holds
// its own Ed25519 private key; a receiver holds only the public keys of the callers it accepts.
import { X509Certificate, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';

/** Who signs and with which private key. */
export interface Signer {
  name: string;
  key: KeyObject;
}

/** Public keys of the principals a receiver accepts, by name. */
export type PublicKeys = Readonly<Record<string, KeyObject>>;

/** Principals that sign internal calls. */
export const PRINCIPALS = ['gateway', 'console', 'issue', 'delivery', 'cli'] as const;
export type Principal = (typeof PRINCIPALS)[number];

// An environment variable may carry a PEM with its line breaks written as "\n".
const pemText = (value: string) => value.replace(/\\n/g, '\n').trim();

/** An Ed25519 private key from PEM (PKCS#8), as a KeyObject. */
export function parsePrivateKey(value: string): KeyObject {
  const key = createPrivateKey(pemText(value));
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`must be an Ed25519 key, not ${key.asymmetricKeyType}`);
  return key;
}

/** An Ed25519 public key from a PEM public key or from a PEM certificate holding it. */
export function parsePublicKey(value: string): KeyObject {
  const text = pemText(value);
  const key = text.includes('BEGIN CERTIFICATE') ? new X509Certificate(text).publicKey : createPublicKey(text);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`must be an Ed25519 key, not ${key.asymmetricKeyType}`);
  return key;
}

const keySchema = (parse: (value: string) => KeyObject, what: string) =>
  z.string().transform((value, ctx) => {
    try {
      return parse(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `must be ${what} (${(error as Error).message})` });
      return z.NEVER;
    }
  });

/** SIGNING_PRIVATE_KEY: this process's own Ed25519 private key (PEM), never given a default. */
export const privateSigningKey = () => keySchema(parsePrivateKey, 'an Ed25519 private key in PEM');

/** A principal's Ed25519 public key: a PEM public key or a PEM certificate. */
export const publicSigningKey = () => keySchema(parsePublicKey, 'an Ed25519 public key or certificate in PEM');

const publicKeyVariable = (principal: Principal) => `${principal.toUpperCase()}_PUBLIC_KEY` as `${Uppercase<Principal>}_PUBLIC_KEY`;

/** The `<PRINCIPAL>_PUBLIC_KEY` variables of the principals a service accepts calls from. */
export function publicKeysSchema<const Names extends readonly Principal[]>(principals: Names) {
  return Object.fromEntries(
    principals.map((principal) => [
      publicKeyVariable(principal),
      publicSigningKey().describe(`Public key of the ${principal} (PEM, or a PEM certificate holding it): verifies what the ${principal} signs`),
    ]),
  ) as { [Name in Names[number] as `${Uppercase<Name>}_PUBLIC_KEY`]: ReturnType<typeof publicSigningKey> };
}

/** Picks the public keys of `principals` out of a parsed configuration. */
export function publicKeysOf(config: Record<string, unknown>, principals: readonly Principal[]): PublicKeys {
  return Object.fromEntries(principals.map((principal) => [principal, config[publicKeyVariable(principal)] as KeyObject]));
}
