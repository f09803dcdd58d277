import type { z } from 'zod';
import { pageOf, wholeListOf } from './common';
import { delivery, deliveryDetail, deliveryLogFilters } from './deliveries';
import { issue, createIssueSchema, updateIssueSchema } from './issues';
import { createOrganizationInput, createProjectInput, organization, project, updateProjectInput } from './projects';
import { recoverWebhookInput, recovery } from './recoveries';
import { webhookHealth } from './webhook-health';
import { createWebhookInput, rotateSecretInput, rotatedWebhook, updateWebhookInput, webhook } from './webhooks';

/** The path parameters of the API: integer ids, and the delivery's UUID. */
export type PathParameter = 'team' | 'organization' | 'project' | 'issue' | 'webhook' | 'delivery' | 'recovery';

/** What one operation's 409 means, when it has one. */
export type ConflictKind = 'quota' | 'ping' | 'redeliver' | 'recover' | 'rotation';

/** A link from a response to the operations it makes possible (OpenAPI links). */
export interface OperationLink {
  operationId: string;
  /** Parameter name → runtime expression (`$request.path.team`, `$response.body#/id`). */
  parameters: Record<string, string>;
}

export interface Operation {
  operationId: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Relative to the API's base path `/api/v1`, in OpenAPI form (`/teams/{team}/webhooks`). */
  path: string;
  tag: 'Organizations' | 'Projects' | 'Issues' | 'Webhooks' | 'Deliveries' | 'API description';
  summary: string;
  description: string;
  /** Served without a token (only the API description itself). */
  public?: true;
  /** The POST's body may be left out: every field of it is optional. */
  optionalBody?: true;
  /** `limit` and `cursor`: a list that always pages, or one that pages only when asked to. */
  paging?: 'always' | 'on-request';
  /** The JSON request body and its component name. */
  body?: { name: string; schema: z.ZodType };
  /** Query parameters besides `limit` and `cursor`: one per field, all optional. */
  query?: z.ZodObject;
  success: {
    status: 200 | 201 | 202 | 204;
    description: string;
    /** The response body and its component name; none for 204. */
    body?: { name: string; schema: z.ZodType };
    /** A `Location` header naming the new resource. */
    location?: true;
    links?: Record<string, OperationLink>;
  };
  /** Whether the operation can answer 409, and why. */
  conflict?: ConflictKind;
}

const TEAM = '/teams/{team}';
const ORGANIZATION = `${TEAM}/organizations/{organization}`;
const PROJECT = `${ORGANIZATION}/projects/{project}`;
const ISSUE = `${PROJECT}/issues/{issue}`;
const WEBHOOK = `${TEAM}/webhooks/{webhook}`;
const DELIVERY = `${TEAM}/deliveries/{delivery}`;

const schema = <Schema extends z.ZodType>(name: string, value: Schema) => ({ name, schema: value });

// Named once, so that each is one component of the document.
export const RESPONSE_SCHEMAS = {
  Organization: organization,
  Project: project,
  Issue: issue,
  Webhook: webhook,
  RotatedWebhook: rotatedWebhook,
  Delivery: delivery,
  DeliveryDetail: deliveryDetail,
  WebhookHealth: webhookHealth,
  Recovery: recovery,
  OrganizationPage: pageOf(organization, 'A page of organizations, in creation order.'),
  ProjectList: wholeListOf(project, 'Projects in creation order: all of them, or a page when `limit` or `cursor` is given.'),
  IssuePage: pageOf(issue, 'A page of issues, newest first.'),
  WebhookList: wholeListOf(webhook, 'Webhooks, newest first: all of them, or a page when `limit` or `cursor` is given.'),
  DeliveryPage: pageOf(delivery, 'A page of a webhook’s delivery log, newest first.'),
};

export const REQUEST_SCHEMAS = {
  OrganizationCreate: createOrganizationInput,
  ProjectCreate: createProjectInput,
  ProjectUpdate: updateProjectInput,
  IssueCreate: createIssueSchema,
  IssueUpdate: updateIssueSchema,
  WebhookCreate: createWebhookInput,
  WebhookUpdate: updateWebhookInput,
  RecoverWebhook: recoverWebhookInput,
  SecretRotation: rotateSecretInput,
};

const response = (name: keyof typeof RESPONSE_SCHEMAS) => schema(name, RESPONSE_SCHEMAS[name]);
const request = (name: keyof typeof REQUEST_SCHEMAS) => schema(name, REQUEST_SCHEMAS[name]);

const same = (...names: PathParameter[]) => Object.fromEntries(names.map((name) => [name, `$request.path.${name}`]));

/** Every operation of the public API, in the order the document lists them. */
export const OPERATIONS: readonly Operation[] = [
  {
    operationId: 'getApiDescription',
    method: 'get',
    path: '/openapi.json',
    tag: 'API description',
    summary: 'This API description',
    description: 'The OpenAPI 3.1 document of the API, generated from the schemas the services validate with. Served without authentication.',
    public: true,
    success: { status: 200, description: 'The OpenAPI document.' },
  },
  {
    operationId: 'listOrganizations',
    method: 'get',
    path: `${TEAM}/organizations`,
    tag: 'Organizations',
    summary: 'List organizations',
    description: 'The team’s organizations in creation order, a page at a time.',
    paging: 'always',
    success: { status: 200, description: 'A page of organizations.', body: response('OrganizationPage') },
  },
  {
    operationId: 'createOrganization',
    method: 'post',
    path: `${TEAM}/organizations`,
    tag: 'Organizations',
    summary: 'Create an organization',
    description: 'Creates an organization in the team, within the team’s quota of organizations.',
    body: request('OrganizationCreate'),
    conflict: 'quota',
    success: {
      status: 201,
      description: 'The new organization.',
      body: response('Organization'),
      links: {
        listProjects: { operationId: 'listProjects', parameters: { ...same('team'), organization: '$response.body#/id' } },
        createProject: { operationId: 'createProject', parameters: { ...same('team'), organization: '$response.body#/id' } },
      },
    },
  },
  {
    operationId: 'listProjects',
    method: 'get',
    path: `${ORGANIZATION}/projects`,
    tag: 'Projects',
    summary: 'List projects',
    description: 'The organization’s projects in creation order: all of them, or a page when `limit` or `cursor` is given.',
    paging: 'on-request',
    success: { status: 200, description: 'The projects.', body: response('ProjectList') },
  },
  {
    operationId: 'createProject',
    method: 'post',
    path: `${ORGANIZATION}/projects`,
    tag: 'Projects',
    summary: 'Create a project',
    description: 'Creates a project in the organization, with a slug made from its name, within the team’s quota of projects.',
    body: request('ProjectCreate'),
    conflict: 'quota',
    success: {
      status: 201,
      description: 'The new project.',
      body: response('Project'),
      location: true,
      links: {
        getProject: { operationId: 'getProject', parameters: { ...same('team', 'organization'), project: '$response.body#/id' } },
        updateProject: { operationId: 'updateProject', parameters: { ...same('team', 'organization'), project: '$response.body#/id' } },
        listIssues: { operationId: 'listIssues', parameters: { ...same('team', 'organization'), project: '$response.body#/id' } },
        createIssue: { operationId: 'createIssue', parameters: { ...same('team', 'organization'), project: '$response.body#/id' } },
      },
    },
  },
  {
    operationId: 'getProject',
    method: 'get',
    path: PROJECT,
    tag: 'Projects',
    summary: 'Get a project',
    description: 'One project of the organization.',
    success: { status: 200, description: 'The project.', body: response('Project') },
  },
  {
    operationId: 'updateProject',
    method: 'patch',
    path: PROJECT,
    tag: 'Projects',
    summary: 'Update a project',
    description: 'Changes the fields sent; a new name makes a new slug.',
    body: request('ProjectUpdate'),
    success: { status: 200, description: 'The project after the change.', body: response('Project') },
  },
  {
    operationId: 'listIssues',
    method: 'get',
    path: `${PROJECT}/issues`,
    tag: 'Issues',
    summary: 'List issues',
    description: 'The project’s issues, newest first, a page at a time.',
    paging: 'always',
    success: { status: 200, description: 'A page of issues.', body: response('IssuePage') },
  },
  {
    operationId: 'createIssue',
    method: 'post',
    path: `${PROJECT}/issues`,
    tag: 'Issues',
    summary: 'Create an issue',
    description: 'Creates an issue with the next number of the project, and sends `issue.created` to the team’s webhooks that subscribe to it.',
    body: request('IssueCreate'),
    success: {
      status: 201,
      description: 'The new issue.',
      body: response('Issue'),
      links: {
        getIssue: { operationId: 'getIssue', parameters: { ...same('team', 'organization', 'project'), issue: '$response.body#/id' } },
        updateIssue: { operationId: 'updateIssue', parameters: { ...same('team', 'organization', 'project'), issue: '$response.body#/id' } },
      },
    },
  },
  {
    operationId: 'getIssue',
    method: 'get',
    path: ISSUE,
    tag: 'Issues',
    summary: 'Get an issue',
    description: 'One issue of the project.',
    success: { status: 200, description: 'The issue.', body: response('Issue') },
  },
  {
    operationId: 'updateIssue',
    method: 'patch',
    path: ISSUE,
    tag: 'Issues',
    summary: 'Update an issue',
    description: 'Changes the fields sent; when at least one changes, sends `issue.updated` with the changes to the team’s webhooks that subscribe to it.',
    body: request('IssueUpdate'),
    success: { status: 200, description: 'The issue after the change.', body: response('Issue') },
  },
  {
    operationId: 'listWebhooks',
    method: 'get',
    path: `${TEAM}/webhooks`,
    tag: 'Webhooks',
    summary: 'List webhooks',
    description: 'The team’s webhooks, newest first: all of them, or a page when `limit` or `cursor` is given.',
    paging: 'on-request',
    success: { status: 200, description: 'The webhooks.', body: response('WebhookList') },
  },
  {
    operationId: 'createWebhook',
    method: 'post',
    path: `${TEAM}/webhooks`,
    tag: 'Webhooks',
    summary: 'Create a webhook',
    description: 'Subscribes an HTTPS endpoint to issue events, within the team’s quota of webhooks. The URL’s host must resolve to public addresses only.',
    body: request('WebhookCreate'),
    conflict: 'quota',
    success: {
      status: 201,
      description: 'The new webhook (never its secret).',
      body: response('Webhook'),
      location: true,
      links: {
        getWebhook: { operationId: 'getWebhook', parameters: { ...same('team'), webhook: '$response.body#/id' } },
        updateWebhook: { operationId: 'updateWebhook', parameters: { ...same('team'), webhook: '$response.body#/id' } },
        deleteWebhook: { operationId: 'deleteWebhook', parameters: { ...same('team'), webhook: '$response.body#/id' } },
        pingWebhook: { operationId: 'pingWebhook', parameters: { ...same('team'), webhook: '$response.body#/id' } },
        listDeliveries: { operationId: 'listDeliveries', parameters: { ...same('team'), webhook: '$response.body#/id' } },
      },
    },
  },
  {
    operationId: 'getWebhook',
    method: 'get',
    path: WEBHOOK,
    tag: 'Webhooks',
    summary: 'Get a webhook',
    description: 'One webhook of the team (never its secret).',
    success: { status: 200, description: 'The webhook.', body: response('Webhook') },
  },
  {
    operationId: 'updateWebhook',
    method: 'patch',
    path: WEBHOOK,
    tag: 'Webhooks',
    summary: 'Update a webhook',
    description: 'Changes the fields sent. Deactivating a webhook stops its pending deliveries.',
    body: request('WebhookUpdate'),
    success: { status: 200, description: 'The webhook after the change.', body: response('Webhook') },
  },
  {
    operationId: 'rotateWebhookSecret',
    method: 'post',
    path: `${WEBHOOK}/secret/rotate`,
    tag: 'Webhooks',
    summary: 'Rotate a webhook’s secret',
    description:
      'Replaces the signing secret with the one sent, or a generated one, and answers it this once. The replaced secret keeps signing `webhook-signature` next to the new one for `overlap_seconds` (24 hours by default), so receivers can switch without a gap; `X-Webhook-Signature` uses the new secret at once. A webhook holds a bounded number of old secrets still signing (5 by default): beyond it the rotation is refused. With an `Idempotency-Key`, a retry gets the same answer, new secret included (kept encrypted, like every secret), and the webhook rotates once.',
    body: request('SecretRotation'),
    optionalBody: true,
    conflict: 'rotation',
    success: { status: 200, description: 'The webhook with its new secret.', body: response('RotatedWebhook') },
  },
  {
    operationId: 'deleteWebhook',
    method: 'delete',
    path: WEBHOOK,
    tag: 'Webhooks',
    summary: 'Delete a webhook',
    description: 'Deletes the webhook; deliveries to it stop at once.',
    success: { status: 204, description: 'Deleted.' },
  },
  {
    operationId: 'getWebhookHealth',
    method: 'get',
    path: `${WEBHOOK}/health`,
    tag: 'Webhooks',
    summary: 'Get a webhook’s health',
    description:
      'How the webhook’s endpoint has been answering: attempts, successes, failures and response times (p50, p95) of the last hour and day, its circuit breaker, its last error, and how long every attempt has been failing (with when it will be switched off if that goes on). Read from running totals: as quick for an endpoint with millions of attempts as for one with none.',
    success: { status: 200, description: 'The webhook’s health.', body: response('WebhookHealth') },
  },
  {
    operationId: 'pingWebhook',
    method: 'post',
    path: `${WEBHOOK}/ping`,
    tag: 'Deliveries',
    summary: 'Ping a webhook',
    description: 'Sends a signed `ping` event to this webhook alone. It must be active.',
    conflict: 'ping',
    success: {
      status: 201,
      description: 'The delivery of the ping.',
      body: response('Delivery'),
      links: {
        getDelivery: { operationId: 'getDelivery', parameters: { ...same('team'), delivery: '$response.body#/id' } },
        redeliver: { operationId: 'redeliver', parameters: { ...same('team'), delivery: '$response.body#/id' } },
      },
    },
  },
  {
    operationId: 'listDeliveries',
    method: 'get',
    path: `${WEBHOOK}/deliveries`,
    tag: 'Deliveries',
    summary: 'List a webhook’s deliveries',
    description: 'The delivery log of one webhook, newest first, a page at a time; the filters narrow it by state, event type, event id, issue and creation time, and combine.',
    paging: 'always',
    query: deliveryLogFilters,
    success: { status: 200, description: 'A page of deliveries.', body: response('DeliveryPage') },
  },
  {
    operationId: 'getDelivery',
    method: 'get',
    path: DELIVERY,
    tag: 'Deliveries',
    summary: 'Get a delivery',
    description: 'One delivery with the body it sends and every attempt.',
    success: { status: 200, description: 'The delivery.', body: response('DeliveryDetail') },
  },
  {
    operationId: 'redeliver',
    method: 'post',
    path: `${DELIVERY}/redeliver`,
    tag: 'Deliveries',
    summary: 'Redeliver',
    description: 'A new delivery of the same bytes to the same webhook, which must still exist and be active.',
    conflict: 'redeliver',
    success: {
      status: 201,
      description: 'The new delivery.',
      body: response('Delivery'),
      links: { getDelivery: { operationId: 'getDelivery', parameters: { ...same('team'), delivery: '$response.body#/id' } } },
    },
  },
  {
    operationId: 'recoverWebhook',
    method: 'post',
    path: `${WEBHOOK}/recover`,
    tag: 'Deliveries',
    summary: 'Recover failed deliveries',
    description:
      'Starts a job that sends again every event whose delivery to this webhook failed in the window (by when the delivery was created), once per event, with the event’s own id, at the webhook’s rate limit (or the operator’s default pace). The webhook must be active; one job runs at a time per webhook, and asking again for the same window while it runs answers that job. A window holding more failed events than the operator allows is refused with 422 (`recovery_too_large`): ask for a shorter one. A window that starts in the future, or ends before it starts, is a 422 too.',
    body: request('RecoverWebhook'),
    conflict: 'recover',
    success: {
      status: 202,
      description: 'The job, queued (or the job already running for the same window).',
      body: response('Recovery'),
      location: true,
      links: { getRecovery: { operationId: 'getRecovery', parameters: { ...same('team', 'webhook'), recovery: '$response.body#/id' } } },
    },
  },
  {
    operationId: 'getRecovery',
    method: 'get',
    path: `${WEBHOOK}/recoveries/{recovery}`,
    tag: 'Deliveries',
    summary: 'Get a recovery job',
    description: 'A recovery job with its progress: events found, sent again, skipped, and how the re-sends went.',
    success: { status: 200, description: 'The job.', body: response('Recovery') },
  },
];

/** The path parameters of an operation's path, in order. */
export const pathParameters = (path: string): PathParameter[] => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as PathParameter);

/** The operation of a method and a path relative to /api/v1 in OpenAPI form. */
export const findOperation = (method: string, path: string): Operation | undefined =>
  OPERATIONS.find((operation) => operation.method === method.toLowerCase() && operation.path === path);
