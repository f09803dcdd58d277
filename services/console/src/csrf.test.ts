import { csrfMatches, newPreSessionToken, validPreSessionToken } from './csrf';

describe('csrfMatches', () => {
  it('accepts only the exact token', () => {
    expect(csrfMatches('abc123', 'abc123')).toBe(true);
    expect(csrfMatches('abc123', 'abc124')).toBe(false);
    expect(csrfMatches('abc123', 'abc12')).toBe(false);
  });

  it('refuses a missing, empty or non-string token, and a session without one', () => {
    expect(csrfMatches('abc123', undefined)).toBe(false);
    expect(csrfMatches('abc123', '')).toBe(false);
    expect(csrfMatches('abc123', ['abc123'])).toBe(false);
    expect(csrfMatches(undefined, 'abc123')).toBe(false);
    expect(csrfMatches('', '')).toBe(false);
  });
});

describe('pre-session tokens', () => {
  it('are 256 random bits in base64url, and only such values are taken from the cookie', () => {
    const token = newPreSessionToken();
    expect(validPreSessionToken(token)).toBe(token);
    expect(newPreSessionToken()).not.toBe(token);
    expect(validPreSessionToken('short')).toBeUndefined();
    expect(validPreSessionToken(`${token.slice(0, 42)}!`)).toBeUndefined();
    expect(validPreSessionToken(undefined)).toBeUndefined();
  });
});
