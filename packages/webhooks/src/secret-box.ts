import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encryption at rest for webhook signing secrets: AES-256-GCM under a key derived from an
 * operator's key string (WEBHOOK_SECRET_KEY). A sealed value names the key that sealed it, so
 * keys can rotate: the current key seals, older keys are kept only to open what they sealed
 * until it has been sealed again.
 *
 * Sealed form: `wsb1.<key id>.<base64url nonce>.<base64url ciphertext + tag>`.
 */

const VERSION = 'wsb1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const MIN_KEY_LENGTH = 32;

interface DerivedKey {
  id: string;
  key: Buffer;
}

const derive = (keyMaterial: string, info: string, bytes: number) => Buffer.from(hkdfSync('sha256', Buffer.from(keyMaterial, 'utf8'), 'worklane-secret-box', info, bytes));

function deriveKey(keyMaterial: string): DerivedKey {
  if (keyMaterial.length < MIN_KEY_LENGTH) throw new TypeError(`a secret box key must be at least ${MIN_KEY_LENGTH} characters`);
  // The id is derived separately from the encryption key, so publishing it reveals nothing of it.
  return { id: derive(keyMaterial, 'key-id', 6).toString('hex'), key: derive(keyMaterial, 'aes-256-gcm', 32) };
}

/** A sealed value that cannot be opened: malformed, tampered with, or sealed by a key we no longer have. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

export interface SecretBoxKeys {
  /** Seals new values. */
  current: string;
  /** Still opens values sealed before a rotation. */
  previous?: readonly string[];
}

export class SecretBox {
  private readonly current: DerivedKey;
  private readonly keys: ReadonlyMap<string, DerivedKey>;

  constructor(keys: SecretBoxKeys) {
    this.current = deriveKey(keys.current);
    const all = [this.current, ...(keys.previous ?? []).map(deriveKey)];
    this.keys = new Map(all.map((key) => [key.id, key]));
  }

  /** The id of the key that seals new values. */
  get currentKeyId(): string {
    return this.current.id;
  }

  /**
   * Seals `plaintext`. `context` (e.g. the owning team) is authenticated but not stored: the
   * value opens only with the same context, so a sealed secret copied to another record is useless.
   */
  seal(plaintext: string, context = ''): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, nonce);
    cipher.setAAD(this.aad(this.current.id, context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return [VERSION, this.current.id, nonce.toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  /** Opens a value sealed by any known key with the same `context`; throws SecretBoxError otherwise. */
  open(sealed: string, context = ''): string {
    const [version, keyId, nonceText, ciphertextText, ...rest] = sealed.split('.');
    if (version !== VERSION || !keyId || !nonceText || !ciphertextText || rest.length > 0) throw new SecretBoxError('not a sealed value');
    const key = this.keys.get(keyId);
    if (!key) throw new SecretBoxError(`sealed with key ${keyId}, which is not configured`);
    const nonce = Buffer.from(nonceText, 'base64url');
    const ciphertext = Buffer.from(ciphertextText, 'base64url');
    if (nonce.length !== NONCE_BYTES || ciphertext.length < TAG_BYTES) throw new SecretBoxError('not a sealed value');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, nonce);
      decipher.setAAD(this.aad(keyId, context));
      decipher.setAuthTag(ciphertext.subarray(ciphertext.length - TAG_BYTES));
      return Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretBoxError('sealed value failed authentication');
    }
  }

  /** Ids of the keys kept only to open what they sealed before a rotation. */
  get previousKeyIds(): string[] {
    return [...this.keys.keys()].filter((id) => id !== this.current.id);
  }

  /** The id of the key that sealed `sealed`, or undefined when it is not a sealed value. */
  keyIdOf(sealed: string): string | undefined {
    const [version, keyId] = sealed.split('.');
    return version === VERSION && keyId ? keyId : undefined;
  }

  /** Whether `sealed` should be sealed again under the current key. */
  needsResealing(sealed: string): boolean {
    return this.keyIdOf(sealed) !== this.current.id;
  }

  private aad(keyId: string, context: string): Buffer {
    return Buffer.from(`${VERSION}.${keyId}.${context}`, 'utf8');
  }
}
