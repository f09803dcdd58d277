// The API's resources as the console reads them: the fields its pages show, picked from the
// schemas of the OpenAPI document (@worklane/api-client), so a field the document renames, drops or
// retypes fails to compile here rather than showing blank on a page.
import type { Schemas } from '@worklane/api-client';

export type Organization = Pick<Schemas['Organization'], 'id' | 'team_id' | 'name' | 'created_at'>;

export type Project = Pick<Schemas['Project'], 'id' | 'organization_id' | 'name' | 'slug' | 'description' | 'github_repository' | 'created_at'>;

export type Issue = Pick<Schemas['Issue'], 'id' | 'project_id' | 'number' | 'reference_code' | 'title' | 'type' | 'status' | 'priority' | 'created_at'>;

export type WebhookEvent = Schemas['Webhook']['events'][number];

/** The events a webhook can subscribe to, in the order the form lists them. */
export const WEBHOOK_EVENTS = ['issue.created', 'issue.updated'] as const satisfies readonly WebhookEvent[];

export type Webhook = Schemas['Webhook'];

export type OperationalEvent = Schemas['Webhook']['operational_events'][number];

/** Events about the team's webhooks themselves that a webhook may opt in to, in the order the form lists them. */
export const OPERATIONAL_EVENTS = ['webhook.failing', 'webhook.disabled'] as const satisfies readonly OperationalEvent[];

/** The body of a webhook update, as the API document describes it. */
export type WebhookUpdate = Schemas['WebhookUpdate'];

export type WebhookCreate = Schemas['WebhookCreate'];

/** One attempt of a delivery; `response_body` holds the first 4 KiB of the response body. */
export type DeliveryAttempt = Pick<Schemas['DeliveryDetail']['attempts'][number], 'number' | 'attempted_at' | 'status_code' | 'error' | 'duration_ms' | 'response_body'>;

export type Delivery = Pick<
  Schemas['Delivery'],
  'id' | 'webhook_id' | 'event' | 'event_id' | 'status' | 'failure_reason' | 'attempt_count' | 'next_attempt_at' | 'redelivery_of' | 'recovery_id' | 'created_at'
>;

export type WebhookHealth = Schemas['WebhookHealth'];

export type Recovery = Schemas['Recovery'];

/** One delivery with its body and every attempt, each with the headers sent and received. */
export type DeliveryDetail = Schemas['DeliveryDetail'];

export type DeliveryStatus = Schemas['Delivery']['status'];

export type DeliveryEvent = Schemas['Delivery']['event'];

/** The delivery log's filters, in the order the form lists their choices. */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const satisfies readonly DeliveryStatus[];
export const DELIVERY_EVENTS = ['issue.created', 'issue.updated', 'ping', 'webhook.failing', 'webhook.disabled'] as const satisfies readonly DeliveryEvent[];
