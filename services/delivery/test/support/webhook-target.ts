import type { WebhookTarget } from '../../src/clients/webhooks';

/** An active webhook of `teamId` subscribed to issue.created, as the webhook directory describes it. */
export function webhookTarget(id: number, teamId = 1, changes: Partial<WebhookTarget> = {}): WebhookTarget {
  return {
    id,
    teamId,
    url: `https://receiver.example/${id}`,
    events: ['issue.created'],
    active: true,
    secret: 'secret',
    previousSecrets: [],
    ed25519PrivateKey: null,
    organizationIds: [],
    projectIds: [],
    rateLimitPerSecond: null,
    operationalEvents: [],
    ...changes,
  };
}
