import { HttpError } from '../errors';
import { canonicalJson, idempotencyKeyOf, requestFingerprint } from './request';

describe('idempotencyKeyOf', () => {
  it('is undefined without the header, and the key itself when it is 1 to 255 printable ASCII characters', () => {
    expect(idempotencyKeyOf({})).toBeUndefined();
    for (const key of ['a', '5f0c7a52-3f2e-4f0b-9a57-1d1c0e6b7a21', 'order 42/retry:1', '~'.repeat(255)]) expect(idempotencyKeyOf({ 'idempotency-key': key })).toBe(key);
  });

  it('refuses anything else with 400 idempotency_key_invalid', () => {
    for (const key of ['', 'k'.repeat(256), 'tab\there', 'é', ' leading', 'trailing ']) {
      let thrown: unknown;
      try {
        idempotencyKeyOf({ 'idempotency-key': key });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(HttpError);
      expect((thrown as HttpError).status).toBe(400);
      expect((thrown as HttpError).code).toBe('idempotency_key_invalid');
    }
  });
});

describe('requestFingerprint', () => {
  it('is the same for bodies that differ only in key order or spacing', () => {
    expect(canonicalJson(JSON.parse('{"b": [1, {"d": 2, "c": null}], "a": "x"}'))).toBe('{"a":"x","b":[1,{"c":null,"d":2}]}');
    expect(requestFingerprint('POST', '/p', { a: 1, b: { c: 2, d: 3 } })).toEqual(requestFingerprint('post', '/p', { b: { d: 3, c: 2 }, a: 1 }));
  });

  it('differs with the path, the method or any value of the body', () => {
    const base = requestFingerprint('POST', '/p', { title: 'x' });
    expect(requestFingerprint('POST', '/q', { title: 'x' })).not.toEqual(base);
    expect(requestFingerprint('PUT', '/p', { title: 'x' })).not.toEqual(base);
    expect(requestFingerprint('POST', '/p', { title: 'y' })).not.toEqual(base);
    expect(requestFingerprint('POST', '/p', { title: 'x', extra: null })).not.toEqual(base);
    // No body and an empty object are different requests.
    expect(requestFingerprint('POST', '/p', undefined)).not.toEqual(requestFingerprint('POST', '/p', {}));
  });
});
