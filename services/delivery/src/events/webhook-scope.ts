import type { WebhookTarget } from '../clients/webhooks';
import type { EventHeader } from '../domain/delivery';

/**
 * Whether an event falls inside a webhook's scope besides its event types: its organization among
 * the webhook's `organizationIds` and its project among its `projectIds`, an empty list meaning
 * every one. Both lists must hold when both are set. An event that does not say its organization
 * (or project) is outside a scope that names organizations (projects): a scope is a promise about
 * what the receiver gets, so an event that cannot be shown to be inside it is not sent. Only
 * events published before the envelope carried the organization lack it.
 */
export function inScope(webhook: Pick<WebhookTarget, 'organizationIds' | 'projectIds'>, event: Pick<EventHeader, 'organization_id' | 'project_id'>): boolean {
  return matches(webhook.organizationIds, event.organization_id) && matches(webhook.projectIds, event.project_id);
}

const matches = (allowed: readonly number[] | undefined, value: number | undefined): boolean =>
  !allowed || allowed.length === 0 || (value !== undefined && allowed.some((id) => Number(id) === value));
