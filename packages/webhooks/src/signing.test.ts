import { createHmac } from 'node:crypto';
import { bodySignature, deliveryHeaders, signatureHeaders, standardSignature } from './signing';

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
