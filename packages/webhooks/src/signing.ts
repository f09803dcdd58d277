import { createHmac } from 'node:crypto';

/** Everything that identifies and authenticates one attempt of one delivery. */
export interface SignatureInput {
  /** The delivery id: `X-Webhook-Delivery` and `webhook-id`. */
  deliveryId: string;
  /** The exact bytes sent as the request body. */
  body: Buffer;
  /** The webhook's signing secret; no signature headers without one. */
  secret: string | null;
  /** Unix seconds of this attempt: `webhook-timestamp`. */
  timestamp: number;
}

/** `X-Webhook-Signature`: lowercase hex HMAC-SHA256 of the raw body, keyed with the secret (SPEC section 6). */
export function bodySignature(secret: string, body: Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * `webhook-signature` of Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<body>`. The key is the secret's UTF-8 bytes, so the receiver needs nothing
 * but the secret it configured; the timestamp in the signed content lets it refuse replays.
 */
export function standardSignature(secret: string, deliveryId: string, timestamp: number, body: Buffer): string {
  const digest = createHmac('sha256', secret).update(`${deliveryId}.${timestamp}.`).update(body).digest('base64');
  return `v1,${digest}`;
}

/** The signature headers of one attempt (none when the webhook has no secret). */
export function signatureHeaders(input: SignatureInput): Record<string, string> {
  if (!input.secret) return {};
  return {
    'X-Webhook-Signature': bodySignature(input.secret, input.body),
    'webhook-id': input.deliveryId,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': standardSignature(input.secret, input.deliveryId, input.timestamp, input.body),
  };
}

export interface DeliveryHeaderInput extends SignatureInput {
  event: string;
  /** `Worklane-Webhooks/<version>`. */
  userAgent: string;
}

/** Every header of a delivery attempt, as docs/webhooks.md lists them for receivers. */
export function deliveryHeaders(input: DeliveryHeaderInput): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': input.userAgent,
    'X-Webhook-Event': input.event,
    'X-Webhook-Delivery': input.deliveryId,
    ...signatureHeaders(input),
  };
}
