import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { base62Checksum, generateToken, hashToken, isWellFormedToken } from './token-format';

describe('API token format', () => {
  it('is wl_ followed by 36 base62 characters', () => {
    const token = generateToken();
    expect(token).toMatch(/^wl_[0-9A-Za-z]{36}$/);
  });

  it('carries at least 160 random bits (30 base62 characters) and differs every time', () => {
    expect(30 * Math.log2(62)).toBeGreaterThanOrEqual(160);
    const tokens = new Set(Array.from({ length: 200 }, generateToken));
    expect(tokens.size).toBe(200);
  });

  it('ends with the base62 CRC32 of everything before the checksum', () => {
    const token = generateToken();
    expect(token.slice(-6)).toBe(base62Checksum(crc32(token.slice(0, -6))));
    expect(isWellFormedToken(token)).toBe(true);
  });

  it('refuses a value whose checksum does not match', () => {
    const token = generateToken();
    const flipped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
    expect(isWellFormedToken(flipped)).toBe(false);
  });

  it('refuses values of the wrong shape', () => {
    const token = generateToken();
    for (const value of ['', 'wl_', token.slice(0, -1), `${token}x`, token.replace('wl_', 'xx_'), token.replace(/.$/, '!'), ` ${token}`]) {
      expect(isWellFormedToken(value)).toBe(false);
    }
  });

  it('encodes checksums with a fixed width, zero included', () => {
    expect(base62Checksum(0)).toBe('000000');
    expect(base62Checksum(61)).toBe('00000z');
    expect(base62Checksum(0xffffffff)).toHaveLength(6);
  });

  it('hashes to lower-case hex SHA-256 of the whole value', () => {
    const token = generateToken();
    expect(hashToken(token)).toBe(createHash('sha256').update(token).digest('hex'));
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
  });
});
