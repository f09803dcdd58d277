import { bearerToken } from './authenticate';

describe('bearerToken', () => {
  const token = 'wl_0123456789abcdefghijABCDEFGHIJ012345';

  it('reads the token of an Authorization: Bearer header, scheme in any case', () => {
    expect(bearerToken(`Bearer ${token}`)).toBe(token);
    expect(bearerToken(`bearer ${token}`)).toBe(token);
    expect(bearerToken(`BEARER   ${token} `)).toBe(token);
  });

  it.each([undefined, '', 'Bearer', 'Bearer ', `Basic ${token}`, `Bearer ${token} extra`, `Bearer ${'a'.repeat(257)}`, 'Bearer wl_ä', `Token ${token}`])(
    'finds no token in %p',
    (header) => {
      expect(bearerToken(header)).toBeUndefined();
    },
  );
});
