import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ReceivedRequest } from './receiver';

const equal = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/**
 * Verifies a delivery the way the receiver example in docs/webhooks.md does: X-Webhook-Signature
 * over the raw body, and the Standard Webhooks signature over "id.timestamp.body" with a fresh
 * timestamp. Returns the problems found (empty when the delivery is authentic).
 */
export function signatureProblems(request: ReceivedRequest, secret: string, toleranceSeconds = 300): string[] {
  const problems: string[] = [];
  const hex = createHmac('sha256', secret).update(request.body).digest('hex');
  if (!equal(request.headers['x-webhook-signature'] ?? '', hex)) problems.push('X-Webhook-Signature does not match the body');

  const id = request.headers['webhook-id'];
  const timestamp = request.headers['webhook-timestamp'];
  const signatures = (request.headers['webhook-signature'] ?? '').split(' ');
  if (!id || !timestamp) return [...problems, 'webhook-id or webhook-timestamp missing'];
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) problems.push('webhook-timestamp is not fresh');
  const expected = createHmac('sha256', secret).update(`${id}.${timestamp}.`).update(request.body).digest('base64');
  if (!signatures.some((entry) => entry.startsWith('v1,') && equal(entry.slice(3), expected))) problems.push('webhook-signature does not match');
  return problems;
}
