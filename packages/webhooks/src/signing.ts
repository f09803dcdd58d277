import { createHmac, createPrivateKey, createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';

/** A secret replaced by a rotation: it keeps signing `webhook-signature` until it expires. */
export interface PreviousSigningSecret {
  secret: string;
  /** Unix milliseconds after which it no longer signs. */
  expiresAtMs: number;
}

/** Everything that identifies and authenticates one attempt of one delivery. */
export interface SignatureInput {
  /** The delivery id: `X-Webhook-Delivery` and `webhook-id`. */
  deliveryId: string;
  /** The exact bytes sent as the request body. */
  body: Buffer;
  /** The webhook's newest signing secret; it alone signs `X-Webhook-Signature`. */
  secret: string | null;
  /** Secrets of a rotation whose overlap has not ended: each adds a `v1,` entry until it expires. */
  previousSecrets?: readonly PreviousSigningSecret[] | undefined;
  /** Base64 of the webhook's 32-byte ed25519 seed: adds a `v1a,` entry. */
  ed25519PrivateKey?: string | null | undefined;
  /** Unix seconds of this attempt: `webhook-timestamp`. */
  timestamp: number;
}

/** `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the secret (SPEC section 6). */
export function bodySignature(secret: string, body: Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** What Standard Webhooks signs: `<id>.<timestamp>.<body>`, the timestamp letting a receiver refuse replays. */
const signedContent = (deliveryId: string, timestamp: number, body: Buffer) => Buffer.concat([Buffer.from(`${deliveryId}.${timestamp}.`), body]);

/**
 * One `v1,` entry of `webhook-signature` (Standard Webhooks): the base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<body>`. The key is the secret's UTF-8 bytes, so the receiver needs nothing
 * but the secret it configured (a Standard Webhooks library takes it as base64 of those bytes).
 */
export function standardSignature(secret: string, deliveryId: string, timestamp: number, body: Buffer): string {
  const digest = createHmac('sha256', secret)
    .update(signedContent(deliveryId, timestamp, body))
    .digest('base64');
  return `v1,${digest}`;
}

// An ed25519 private key in PKCS #8 DER is this fixed prefix and the 32-byte seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const ED25519_SEED_BYTES = 32;
/** Standard Webhooks' prefix of an ed25519 public key. */
export const ED25519_PUBLIC_KEY_PREFIX = 'whpk_';

function ed25519KeyOf(seedBase64: string): KeyObject {
  const seed = Buffer.from(seedBase64, 'base64');
  if (seed.length !== ED25519_SEED_BYTES) throw new Error('an ed25519 private key is the base64 of a 32-byte seed');
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** A new ed25519 key pair: the private key as the base64 of its seed, the public key as `whpk_<base64>`. */
export function newEd25519Key(): { privateKey: string; publicKey: string } {
  const privateKey = randomBytes(ED25519_SEED_BYTES).toString('base64');
  return { privateKey, publicKey: ed25519PublicKey(privateKey) };
}

/** `whpk_` and the base64 of the raw 32-byte public key of a seed, as Standard Webhooks shows it. */
export function ed25519PublicKey(seedBase64: string): string {
  const spki = createPublicKey(ed25519KeyOf(seedBase64)).export({ format: 'der', type: 'spki' });
  return `${ED25519_PUBLIC_KEY_PREFIX}${spki.subarray(spki.length - 32).toString('base64')}`;
}

/** One `v1a,` entry of `webhook-signature`: the base64 ed25519 signature of `<id>.<timestamp>.<body>`. */
export function ed25519Signature(seedBase64: string, deliveryId: string, timestamp: number, body: Buffer): string {
  return `v1a,${sign(null, signedContent(deliveryId, timestamp, body), ed25519KeyOf(seedBase64)).toString('base64')}`;
}

/**
 * The HMAC secrets that sign an attempt made at `timestamp`: the newest first, then every old one
 * still valid, each once.
 */
export function signingSecrets(input: Pick<SignatureInput, 'secret' | 'previousSecrets' | 'timestamp'>): string[] {
  const nowMs = input.timestamp * 1000;
  const secrets = input.secret ? [input.secret] : [];
  for (const previous of input.previousSecrets ?? []) {
    if (previous.expiresAtMs > nowMs && previous.secret !== '' && !secrets.includes(previous.secret)) secrets.push(previous.secret);
  }
  return secrets;
}

/**
 * The signature headers of one attempt. `X-Webhook-Signature` is signed by the newest secret alone;
 * `webhook-signature` lists, space-separated, a `v1,` entry per secret still valid (so a receiver
 * holding either the old or the new secret of a rotation verifies it) and a `v1a,` entry with an
 * ed25519 key. None when the webhook has neither a secret nor a key.
 */
export function signatureHeaders(input: SignatureInput): Record<string, string> {
  const entries = signingSecrets(input).map((secret) => standardSignature(secret, input.deliveryId, input.timestamp, input.body));
  if (input.ed25519PrivateKey) entries.push(ed25519Signature(input.ed25519PrivateKey, input.deliveryId, input.timestamp, input.body));
  if (entries.length === 0) return {};
  return {
    ...(input.secret ? { 'X-Webhook-Signature': bodySignature(input.secret, input.body) } : {}),
    'webhook-id': input.deliveryId,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': entries.join(' '),
  };
}

export interface DeliveryHeaderInput extends SignatureInput {
  event: string;
  /** `Worklane-Webhooks/<version>`. */
  userAgent: string;
}

/** Every header of a delivery attempt, as docs/webhooks.md lists them for receivers. */
export function deliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': input.userAgent,
    'X-Webhook-Event': input.event,
    'X-Webhook-Delivery': input.deliveryId,
    ...signatureHeaders(input),
  };
}
