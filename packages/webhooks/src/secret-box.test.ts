import { SecretBox, SecretBoxError } from './secret-box';

const OLD_KEY = 'o'.repeat(32);
const NEW_KEY = 'n'.repeat(40);

describe('SecretBox', () => {
  it('opens what it sealed', () => {
    const box = new SecretBox({ current: NEW_KEY });
    const sealed = box.seal('whsec_0123456789abcdef', 'team:1');
    expect(box.open(sealed, 'team:1')).toBe('whsec_0123456789abcdef');
  });

  it('never stores the plaintext and never seals the same value twice alike', () => {
    const box = new SecretBox({ current: NEW_KEY });
    const first = box.seal('whsec_0123456789abcdef');
    const second = box.seal('whsec_0123456789abcdef');
    expect(first).not.toContain('whsec');
    expect(first).not.toBe(second);
    expect(first).toMatch(/^wsb1\.[0-9a-f]{12}\.[\w-]{16}\.[\w-]+$/);
  });

  it('keeps unicode secrets intact', () => {
    const box = new SecretBox({ current: NEW_KEY });
    expect(box.open(box.seal('sécrét-ünïcødé-🔑-value'))).toBe('sécrét-ünïcødé-🔑-value');
  });

  it('refuses a value opened with another context', () => {
    const box = new SecretBox({ current: NEW_KEY });
    const sealed = box.seal('whsec_0123456789abcdef', 'team:1');
    expect(() => box.open(sealed, 'team:2')).toThrow(SecretBoxError);
  });

  it('refuses a tampered value', () => {
    const box = new SecretBox({ current: NEW_KEY });
    const [version, keyId, nonce, ciphertext] = box.seal('whsec_0123456789abcdef').split('.') as [string, string, string, string];
    const flipped = Buffer.from(ciphertext, 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(() => box.open([version, keyId, nonce, flipped.toString('base64url')].join('.'))).toThrow(SecretBoxError);
  });

  it.each(['', 'plain text', 'wsb1.abc', 'wsb2.a.b.c', 'wsb1.a.b.c.d'])('refuses %j as not sealed', (value) => {
    expect(() => new SecretBox({ current: NEW_KEY }).open(value)).toThrow(SecretBoxError);
  });

  it('rotates: a new current key still opens values sealed by a previous key, and says they need resealing', () => {
    const before = new SecretBox({ current: OLD_KEY });
    const sealedBefore = before.seal('whsec_0123456789abcdef', 'team:1');
    const after = new SecretBox({ current: NEW_KEY, previous: [OLD_KEY] });
    expect(after.open(sealedBefore, 'team:1')).toBe('whsec_0123456789abcdef');
    expect(after.keyIdOf(sealedBefore)).toBe(before.currentKeyId);
    expect(after.needsResealing(sealedBefore)).toBe(true);
    expect(after.needsResealing(after.seal('x'.repeat(16)))).toBe(false);
    expect(after.previousKeyIds).toEqual([before.currentKeyId]);
  });

  it('cannot open a value once its key is dropped', () => {
    const sealed = new SecretBox({ current: OLD_KEY }).seal('whsec_0123456789abcdef');
    expect(() => new SecretBox({ current: NEW_KEY }).open(sealed)).toThrow(/not configured/);
  });

  it('derives a key id that does not depend on the order keys are given and differs between keys', () => {
    expect(new SecretBox({ current: OLD_KEY }).currentKeyId).toBe(new SecretBox({ current: OLD_KEY, previous: [NEW_KEY] }).currentKeyId);
    expect(new SecretBox({ current: OLD_KEY }).currentKeyId).not.toBe(new SecretBox({ current: NEW_KEY }).currentKeyId);
  });

  it('refuses a key shorter than 32 characters', () => {
    expect(() => new SecretBox({ current: 'short' })).toThrow(/at least 32/);
    expect(() => new SecretBox({ current: NEW_KEY, previous: ['short'] })).toThrow(/at least 32/);
  });
});
