// Rotating a webhook's secret without downtime, end to end: real deliveries made during the overlap
// verify with the old and with the new secret through the official Standard Webhooks library
// (`standardwebhooks`), X-Webhook-Signature follows the new secret at once, and the ed25519 `v1a`
// signature verifies with the public key the API shows.
import { createHmac, createPublicKey, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { ReceivedRequest } from './support/receiver';
import { signatureProblems } from './support/signatures';
import { createIssue, createWebhook, payloadOf, startDeliverySystem, type DeliverySystem, type TestTeam } from './support/system';

const FIRST_SECRET = 'the-secret-before-rotation';

let env: DeliverySystem;
let team: TestTeam;

beforeAll(async () => {
  env = await startDeliverySystem();
  team = await env.newTeam('Rotation team');
}, 120_000);
afterAll(async () => {
  await env?.stop();
});

/**
 * What docs/webhook-signatures.md tells a receiver to do with a Standard Webhooks library: the
 * secret's UTF-8 bytes are the key, which the library takes as base64.
 */
const standardVerifier = (secret: string) => new Webhook(Buffer.from(secret).toString('base64'));

const verifies = (secret: string, request: ReceivedRequest) => {
  try {
    standardVerifier(secret).verify(request.body.toString('utf8'), request.headers);
    return true;
  } catch {
    return false;
  }
};

/** Creates an issue and waits for its issue.created delivery at `path`. */
async function deliveredIssue(path: string, title: string): Promise<ReceivedRequest> {
  const issue = await createIssue(team, { title });
  const ofIssue = (candidate: ReceivedRequest) => candidate.path === path && payloadOf(candidate).issue?.id === issue.id;
  await env.receiver.waitFor((requests) => requests.some(ofIssue), 20_000, `the delivery of issue ${issue.id}`);
  return env.receiver.requests.find(ofIssue)!;
}

const rotate = (webhookId: number, body: Record<string, unknown>) => team.client.post(`/teams/${team.team_id}/webhooks/${webhookId}/secret/rotate`, body);

describe('a secret rotation with an overlap', () => {
  it('signs every delivery of the overlap with the new and the old secret, each verifiable by an off-the-shelf Standard Webhooks verifier', async () => {
    const path = '/rotation';
    const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created'], secret: FIRST_SECRET });

    const before = await deliveredIssue(path, 'Before the rotation');
    expect(verifies(FIRST_SECRET, before)).toBe(true);
    expect(before.headers['webhook-signature']!.split(' ')).toHaveLength(1);

    const rotated = await rotate(webhook.id, { overlap_seconds: 3600 });
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.secret;

    const during = await deliveredIssue(path, 'During the overlap');
    expect(during.headers['webhook-signature']!.split(' ').map((entry) => entry.split(',')[0])).toEqual(['v1', 'v1']);
    // A receiver still on the old secret and one already on the new one both accept it...
    expect(verifies(FIRST_SECRET, during)).toBe(true);
    expect(verifies(newSecret, during)).toBe(true);
    // ...and nobody else does.
    expect(verifies('a-secret-this-webhook-never-had', during)).toBe(false);
    // X-Webhook-Signature is the new secret's alone; the documented receiver accepts it with the new secret.
    expect(during.headers['x-webhook-signature']).toBe(createHmac('sha256', newSecret).update(during.body).digest('hex'));
    expect(signatureProblems(during, newSecret)).toEqual([]);
    expect(signatureProblems(during, FIRST_SECRET)).toEqual(['X-Webhook-Signature does not match the body']);
    // The body the receiver gets is the same envelope as ever.
    expect(Object.keys(payloadOf(during))).toEqual(['id', 'event', 'created_at', 'team_id', 'issue']);

    // A rotation without an overlap ends the old secrets at once.
    const immediate = await rotate(webhook.id, { overlap_seconds: 0 });
    expect(immediate.status).toBe(200);
    const newest: string = immediate.body.secret;
    const after = await deliveredIssue(path, 'After an immediate rotation');
    // The previous rotation's overlap still runs for FIRST_SECRET; the secret replaced just now is gone.
    expect(verifies(newest, after)).toBe(true);
    expect(verifies(FIRST_SECRET, after)).toBe(true);
    expect(verifies(newSecret, after)).toBe(false);
  });

  it('stops signing with the old secret once a PATCH replaces the secret', async () => {
    const path = '/rotation-then-patch';
    const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created'], secret: FIRST_SECRET });
    expect((await rotate(webhook.id, {})).status).toBe(200);
    const patched = await team.client.patch(`/teams/${team.team_id}/webhooks/${webhook.id}`, { secret: 'the-secret-set-by-patch' });
    expect(patched.status).toBe(200);
    const request = await deliveredIssue(path, 'After the PATCH');
    expect(request.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(verifies('the-secret-set-by-patch', request)).toBe(true);
    expect(verifies(FIRST_SECRET, request)).toBe(false);
  });
});

describe('ed25519 signing', () => {
  it('adds a v1a entry that verifies with the webhook’s ed25519_public_key, next to the v1 entry', async () => {
    const path = '/ed25519';
    const webhook = await createWebhook(team, { url: env.receiver.url(path), events: ['issue.created'], secret: FIRST_SECRET });
    const enabled = await team.client.patch(`/teams/${team.team_id}/webhooks/${webhook.id}`, { ed25519_signing: true });
    expect(enabled.status).toBe(200);
    const publicKey: string = enabled.body.ed25519_public_key;
    expect(publicKey).toMatch(/^whpk_/);

    const request = await deliveredIssue(path, 'Signed with ed25519');
    const entries = request.headers['webhook-signature']!.split(' ');
    expect(entries.map((entry) => entry.split(',')[0])).toEqual(['v1', 'v1a']);
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey.slice('whpk_'.length), 'base64').toString('base64url') }, format: 'jwk' });
    const signed = Buffer.concat([Buffer.from(`${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.`), request.body]);
    expect(verify(null, signed, key, Buffer.from(entries[1]!.slice('v1a,'.length), 'base64'))).toBe(true);
    // The HMAC entry still verifies with the library, which skips the v1a entry.
    expect(verifies(FIRST_SECRET, request)).toBe(true);
  });
});
