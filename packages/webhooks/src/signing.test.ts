import { createHmac, createPublicKey, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { bodySignature, deliveryHeaders, ed25519PublicKey, newEd25519Key, signatureHeaders, signingSecrets, standardSignature } from './signing';

const secret = 'whsec-test-0123456789';
const body = Buffer.from('{"id":"e1","event":"issue.created"}');

describe('webhook signatures', () => {
  it('X-Webhook-Signature is the lowercase hex HMAC-SHA256 of the raw body', () => {
    const expected = createHmac('sha256', secret).update(body).digest('hex');
    expect(bodySignature(secret, body)).toBe(expected);
    expect(bodySignature(secret, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('webhook-signature signs "id.timestamp.body" and is prefixed v1,', () => {
    const expected = createHmac('sha256', secret).update(`d1.1700000000.${body.toString()}`).digest('base64');
    expect(standardSignature(secret, 'd1', 1_700_000_000, body)).toBe(`v1,${expected}`);
  });

  it('a different timestamp gives a different Standard Webhooks signature but the same body signature', () => {
    const first = signatureHeaders({ deliveryId: 'd1', body, secret, timestamp: 1 });
    const second = signatureHeaders({ deliveryId: 'd1', body, secret, timestamp: 2 });
    expect(first['X-Webhook-Signature']).toBe(second['X-Webhook-Signature']);
    expect(first['webhook-signature']).not.toBe(second['webhook-signature']);
  });

  it('sends no signature headers for a webhook without a secret', () => {
    const headers = deliveryHeaders({ deliveryId: 'd1', body, secret: null, timestamp: 1, event: 'issue.created', userAgent: 'Worklane-Webhooks/1.0.0' });
    expect(headers).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': 'Worklane-Webhooks/1.0.0',
      'X-Webhook-Event': 'issue.created',
      'X-Webhook-Delivery': 'd1',
    });
  });

  it('with a secret, carries the delivery id as webhook-id and the attempt time as webhook-timestamp', () => {
    const headers = deliveryHeaders({ deliveryId: 'd1', body, secret, timestamp: 1_700_000_000, event: 'ping', userAgent: 'UA' });
    expect(headers['webhook-id']).toBe('d1');
    expect(headers['webhook-timestamp']).toBe('1700000000');
    expect(Object.keys(headers)).toEqual(expect.arrayContaining(['X-Webhook-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature']));
  });
});

/** A Standard Webhooks verifier for one of our secrets: it takes the secret's UTF-8 bytes as base64. */
const verifierOf = (secret: string) => new Webhook(Buffer.from(secret).toString('base64'));
const now = () => Math.floor(Date.now() / 1000);

/** Verifies a `v1a,` entry with the `whpk_` public key, as a receiver of ed25519 signatures does. */
function ed25519Verifies(publicKey: string, headers: Record<string, string>, payload: Buffer): boolean {
  const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  const content = Buffer.concat([Buffer.from(`${headers['webhook-id']}.${headers['webhook-timestamp']}.`), payload]);
  return headers['webhook-signature']!.split(' ').some((entry) => entry.startsWith('v1a,') && verify(null, content, key, Buffer.from(entry.slice(4), 'base64')));
}

describe('signatures during a secret rotation', () => {
  const oldSecret = 'the-secret-before-rotation';
  const newSecret = 'the-secret-after-the-rotation';

  it('lists a v1 entry per valid secret, newest first, verifiable by an off-the-shelf Standard Webhooks library with either secret', () => {
    const timestamp = now();
    const headers = signatureHeaders({ deliveryId: 'msg_1', body, secret: newSecret, previousSecrets: [{ secret: oldSecret, expiresAtMs: (timestamp + 60) * 1000 }], timestamp });
    const entries = headers['webhook-signature']!.split(' ');
    expect(entries).toEqual([standardSignature(newSecret, 'msg_1', timestamp, body), standardSignature(oldSecret, 'msg_1', timestamp, body)]);
    expect(verifierOf(newSecret).verify(body, headers)).toEqual(JSON.parse(body.toString()));
    expect(verifierOf(oldSecret).verify(body, headers)).toEqual(JSON.parse(body.toString()));
    expect(() => verifierOf('a-secret-nobody-has-set').verify(body, headers)).toThrow('No matching signature found');
  });

  it('signs X-Webhook-Signature with the newest secret alone', () => {
    const headers = signatureHeaders({ deliveryId: 'd1', body, secret: newSecret, previousSecrets: [{ secret: oldSecret, expiresAtMs: Number.MAX_SAFE_INTEGER }], timestamp: 1 });
    expect(headers['X-Webhook-Signature']).toBe(bodySignature(newSecret, body));
  });

  it('drops an old secret once its overlap has ended, and repeats no secret', () => {
    const expired = { secret: 'expired-secret-0123456', expiresAtMs: 1_000_000 };
    const valid = { secret: oldSecret, expiresAtMs: 1_000_001 };
    expect(signingSecrets({ secret: newSecret, previousSecrets: [expired, valid, { secret: newSecret, expiresAtMs: 2_000_000 }], timestamp: 1_000 })).toEqual([
      newSecret,
      oldSecret,
    ]);
    const later = signatureHeaders({ deliveryId: 'd1', body, secret: newSecret, previousSecrets: [valid], timestamp: 1_001 });
    expect(later['webhook-signature']).toBe(standardSignature(newSecret, 'd1', 1_001, body));
  });
});

describe('ed25519 signatures', () => {
  it('makes a whpk_ public key of the 32-byte key and a v1a entry it verifies', () => {
    const key = newEd25519Key();
    expect(Buffer.from(key.privateKey, 'base64')).toHaveLength(32);
    expect(key.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(ed25519PublicKey(key.privateKey)).toBe(key.publicKey);

    const headers = signatureHeaders({ deliveryId: 'msg_2', body, secret, ed25519PrivateKey: key.privateKey, timestamp: now() });
    const entries = headers['webhook-signature']!.split(' ');
    expect(entries.map((entry) => entry.split(',')[0])).toEqual(['v1', 'v1a']);
    expect(ed25519Verifies(key.publicKey, headers, body)).toBe(true);
    expect(ed25519Verifies(newEd25519Key().publicKey, headers, body)).toBe(false);
    expect(ed25519Verifies(key.publicKey, headers, Buffer.from('{"tampered":true}'))).toBe(false);
    // A Standard Webhooks library that knows only v1 skips the v1a entry and still verifies.
    expect(() => verifierOf(secret).verify(body, headers)).not.toThrow();
  });

  it('signs with ed25519 alone when the webhook has no secret: no X-Webhook-Signature then', () => {
    const key = newEd25519Key();
    const headers = signatureHeaders({ deliveryId: 'd3', body, secret: null, ed25519PrivateKey: key.privateKey, timestamp: 5 });
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
  });
});
