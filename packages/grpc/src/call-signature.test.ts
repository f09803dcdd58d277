import { generateKeyPairSync } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import { signCall, verifyCall } from './call-signature';

const gateway = generateKeyPairSync('ed25519');
const issue = generateKeyPairSync('ed25519');
const CALLERS = { gateway: gateway.publicKey, issue: issue.publicKey };
const PATH = '/worklane.token.v1.TokenService/Authenticate';

function signed(now = Date.now(), key = gateway.privateKey, path = PATH, caller = 'gateway'): Metadata {
  const metadata = new Metadata();
  signCall(metadata, key, caller, path, now);
  return metadata;
}

describe('internal call signatures', () => {
  it('names the caller of a call signed with its own private key', () => {
    expect(verifyCall(signed(), CALLERS, PATH)).toBe('gateway');
    expect(verifyCall(signed(Date.now(), issue.privateKey, PATH, 'issue'), CALLERS, PATH)).toBe('issue');
  });

  it('refuses an unsigned call, another key, another method and a stale timestamp', () => {
    expect(verifyCall(new Metadata(), CALLERS, PATH)).toBeUndefined();
    expect(verifyCall(signed(Date.now(), generateKeyPairSync('ed25519').privateKey), CALLERS, PATH)).toBeUndefined();
    expect(verifyCall(signed(Date.now(), gateway.privateKey, '/worklane.token.v1.TokenService/RevokeToken'), CALLERS, PATH)).toBeUndefined();
    expect(verifyCall(signed(Date.now() - 120_000), CALLERS, PATH)).toBeUndefined();
  });

  it("refuses a service signing with its own key under another principal's name", () => {
    expect(verifyCall(signed(Date.now(), issue.privateKey, PATH, 'gateway'), CALLERS, PATH)).toBeUndefined();
  });

  it('refuses a caller name changed after signing, and a caller it has no key for', () => {
    const metadata = signed();
    metadata.set('x-worklane-caller', 'issue');
    expect(verifyCall(metadata, CALLERS, PATH)).toBeUndefined();
    const stranger = generateKeyPairSync('ed25519');
    expect(verifyCall(signed(Date.now(), stranger.privateKey, PATH, 'stranger'), CALLERS, PATH)).toBeUndefined();
    expect(verifyCall(signed(Date.now(), stranger.privateKey, PATH, 'toString'), CALLERS, PATH)).toBeUndefined();
  });
});
