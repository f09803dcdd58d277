import { OMITTED_KEY, REDACTED, isCredentialHeader, recordedHeaders } from './exchange';

describe('what an attempt keeps of its headers', () => {
  it('never keeps a credential, whatever the receiver calls it', () => {
    for (const name of [
      'Authorization',
      'proxy-authorization',
      'set-cookie',
      'Cookie',
      'x-auth-token',
      'X-Api-Key',
      'apikey',
      'x-session-id',
      'x-client-secret',
      'x-amz-security-token',
    ])
      expect(isCredentialHeader(name)).toBe(true);
    for (const name of ['content-type', 'x-webhook-signature', 'webhook-signature', 'webhook-id', 'retry-after', 'x-request-id']) expect(isCredentialHeader(name)).toBe(false);
    expect(recordedHeaders({ 'set-cookie': ['a=1', 'b=2'], 'content-type': 'text/plain', 'x-seen': ['1', '2'] }, 4096)).toEqual({
      'set-cookie': REDACTED,
      'content-type': 'text/plain',
      'x-seen': '1, 2',
    });
  });

  it('keeps headers in order up to the bound and counts the rest', () => {
    const kept = recordedHeaders({ a: 'x'.repeat(10), b: 'y'.repeat(10), c: 'z' }, 22);
    expect(kept).toEqual({ a: 'x'.repeat(10), b: 'y'.repeat(10), [OMITTED_KEY]: '1 more header past the 22-byte bound' });
  });

  it('keeps nothing when nothing was sent or received, and no NUL', () => {
    expect(recordedHeaders(undefined, 4096)).toBeNull();
    expect(recordedHeaders({ odd: 'a\u0000b', skipped: undefined }, 4096)).toEqual({ odd: 'a\uFFFDb' });
  });
});
