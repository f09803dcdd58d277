// From the webhook form to the API's request bodies. The console checks only what the typed body
// cannot carry (a rate limit that is not a whole number); every other rule and message is the
// webhook service's, shown beside its field.
import type { Request } from 'express';
import type { ApiClient } from '@worklane/api-client';
import { formList, formString } from '../context';
import type { OperationalEvent, Webhook, WebhookCreate, WebhookEvent, WebhookUpdate } from '../resources';
import type { ScopeChoices, WebhookFormValues } from '../views/webhook-form';
import { apiData, CONCURRENCY, mapLimit, teamOf } from './api-calls';

/** Organizations the scope part of the form lists (each with all its projects). */
export const SCOPE_MAX_ORGANIZATIONS = 50;

export function readWebhookForm(body: unknown): WebhookFormValues {
  return {
    url: formString(body, 'url').trim(),
    events: formList(body, 'events'),
    secret: formString(body, 'secret'),
    active: formString(body, 'active') === 'true',
    description: formString(body, 'description'),
    organization_ids: formList(body, 'organization_ids'),
    project_ids: formList(body, 'project_ids'),
    rate_limit_per_second: formString(body, 'rate_limit_per_second').trim(),
    operational_events: formList(body, 'operational_events'),
    ed25519_signing: formString(body, 'ed25519_signing') === 'true',
  };
}

/** Ids as numbers; the form offers only numeric ones, anything else is dropped. */
const ids = (values: string[]) => [...new Set(values.filter((value) => /^[1-9]\d{0,15}$/.test(value)).map(Number))].sort((a, b) => a - b);

type Settings = Required<Pick<WebhookCreate, 'url' | 'events' | 'active' | 'description' | 'filters' | 'rate_limit_per_second' | 'operational_events' | 'ed25519_signing'>>;

/**
 * The webhook's settings as the API takes them, or the form's own errors. The events are passed on
 * as given, known or not: the service's 422 names a wrong one.
 */
export function settingsOf(values: WebhookFormValues): { settings?: Settings; errors?: Record<string, string[]> } {
  const limit = values.rate_limit_per_second;
  if (limit !== '' && !/^\d{1,9}$/.test(limit)) {
    return { errors: { rate_limit_per_second: ['Enter a whole number of deliveries per second, or leave the field empty for no limit.'] } };
  }
  return {
    settings: {
      url: values.url,
      events: values.events as WebhookEvent[],
      active: values.active,
      description: values.description.trim() === '' ? null : values.description,
      filters: { organization_ids: ids(values.organization_ids), project_ids: ids(values.project_ids) },
      rate_limit_per_second: limit === '' ? null : Number(limit),
      operational_events: values.operational_events as OperationalEvent[],
      ed25519_signing: values.ed25519_signing,
    },
  };
}

const sameList = <T>(a: readonly T[], b: readonly T[]) => a.length === b.length && a.every((item, index) => item === b[index]);

/**
 * Only what the form changed, so saving an untouched field never re-checks it (the URL) or redoes
 * it (a new ed25519 key).
 */
export function changesOf(current: Webhook, settings: Settings): WebhookUpdate {
  const changes: WebhookUpdate = {};
  if (settings.url !== current.url) changes.url = settings.url;
  if (!sameList([...settings.events].sort(), [...current.events].sort())) changes.events = settings.events;
  if (settings.active !== current.active) changes.active = settings.active;
  if ((settings.description ?? null) !== (current.description ?? null)) changes.description = settings.description;
  const filters = settings.filters ?? { organization_ids: [], project_ids: [] };
  if (!sameList(filters.organization_ids ?? [], current.filters.organization_ids) || !sameList(filters.project_ids ?? [], current.filters.project_ids)) {
    changes.filters = filters;
  }
  if (settings.rate_limit_per_second !== current.rate_limit_per_second) changes.rate_limit_per_second = settings.rate_limit_per_second;
  if (!sameList([...settings.operational_events].sort(), [...current.operational_events].sort())) changes.operational_events = settings.operational_events;
  if (settings.ed25519_signing !== (current.ed25519_public_key !== null)) changes.ed25519_signing = settings.ed25519_signing;
  return changes;
}

/** The team's organizations with their projects, for the scope part of the form. */
export async function loadScopeChoices(api: ApiClient, req: Request): Promise<ScopeChoices> {
  const organizations = (await apiData(api.GET('/teams/{team}/organizations', { params: { path: teamOf(req), query: { limit: SCOPE_MAX_ORGANIZATIONS + 1 } } }))).data;
  const listed = organizations.slice(0, SCOPE_MAX_ORGANIZATIONS);
  const withProjects = await mapLimit(listed, CONCURRENCY, async (organization) => ({
    id: organization.id,
    name: organization.name,
    projects: (await apiData(api.GET('/teams/{team}/organizations/{organization}/projects', { params: { path: { ...teamOf(req), organization: organization.id } } }))).data.map(
      (project) => ({ id: project.id, name: project.name }),
    ),
  }));
  return { organizations: withProjects, truncated: organizations.length > SCOPE_MAX_ORGANIZATIONS };
}
