import { Metadata } from '@grpc/grpc-js';
import { signCall, verifyCall } from './call-signature';

const KEY = 'k'.repeat(32);
const PATH = '/worklane.token.v1.TokenService/Authenticate';

function signed(now = Date.now(), key = KEY, path = PATH): Metadata {
  const metadata = new Metadata();
  signCall(metadata, key, 'gateway', path, now);
  return metadata;
}

describe('internal call signatures', () => {
  it('names the caller of a call signed with the shared key', () => {
    expect(verifyCall(signed(), KEY, PATH)).toBe('gateway');
  });

  it('refuses an unsigned call, another key, another method and a stale timestamp', () => {
    expect(verifyCall(new Metadata(), KEY, PATH)).toBeUndefined();
    expect(verifyCall(signed(Date.now(), 'x'.repeat(32)), KEY, PATH)).toBeUndefined();
    expect(verifyCall(signed(Date.now(), KEY, '/worklane.token.v1.TokenService/RevokeToken'), KEY, PATH)).toBeUndefined();
    expect(verifyCall(signed(Date.now() - 120_000), KEY, PATH)).toBeUndefined();
  });

  it('refuses a caller name changed after signing', () => {
    const metadata = signed();
    metadata.set('x-worklane-caller', 'console');
    expect(verifyCall(metadata, KEY, PATH)).toBeUndefined();
  });
});
