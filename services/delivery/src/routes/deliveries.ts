import { randomUUID } from 'node:crypto';
import type { Request, Router } from 'express';
import { HttpError, idParam, notFound, requireTeam, resource, validationFailed } from '@worklane/http';
import { captureTraceContext } from '@worklane/messaging';
import { DirectoryUnavailableError, type WebhookDirectory, type WebhookTarget } from '../clients/webhooks';
import type { DeliveryStore, PageCursor } from '../data/deliveries';

export interface DeliveryRouteDeps {
  deliveries: DeliveryStore;
  webhooks: WebhookDirectory;
  /** Called after a ping or redelivery is stored, so it goes out at once. */
  onDeliveryCreated: () => void;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_PAGE = 1_000;

/** A delivery id from the path; anything that is not a UUID cannot exist, so it is 404. */
function deliveryParam(req: Request): string {
  const value = req.params.delivery;
  if (typeof value !== 'string' || !UUID.test(value)) throw notFound();
  return value.toLowerCase();
}

async function lookUpWebhook(webhooks: WebhookDirectory, teamId: number, webhookId: number): Promise<WebhookTarget | undefined> {
  try {
    return await webhooks.getWebhook(teamId, webhookId);
  } catch (error) {
    if (error instanceof DirectoryUnavailableError) throw new HttpError(503, 'Service temporarily unavailable.', undefined, { 'Retry-After': '1' });
    throw error;
  }
}

/** A webhook that can receive a ping or redelivery now: it exists (else `missing`) and is active (else 409). */
function requireActive(webhook: WebhookTarget | undefined, missing: () => HttpError): WebhookTarget {
  if (!webhook) throw missing();
  if (!webhook.active) throw new HttpError(409, 'The webhook is inactive; activate it to receive deliveries.');
  return webhook;
}

const encodeCursor = (cursor: PageCursor) => Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');

function decodeCursor(text: string): PageCursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(createdAt) && typeof id === 'string' && UUID.test(id)) {
      return { createdAt, id };
    }
  } catch {
    // reported below
  }
  throw validationFailed({ cursor: ['The cursor is invalid.'] });
}

/** `?limit=&cursor=` paging on top of the default whole list. */
function pageOf(req: Request): { limit: number; after?: PageCursor } | undefined {
  const { limit, cursor } = req.query;
  if (limit === undefined && cursor === undefined) return undefined;
  const size = typeof limit === 'string' && /^\d{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
  if (limit !== undefined && !(size >= 1 && size <= MAX_PAGE)) {
    throw validationFailed({ limit: [`The limit field must be an integer between 1 and ${MAX_PAGE}.`] });
  }
  if (cursor !== undefined && typeof cursor !== 'string') throw validationFailed({ cursor: ['The cursor is invalid.'] });
  return { limit: limit === undefined ? 100 : size, ...(cursor ? { after: decodeCursor(cursor) } : {}) };
}

export function deliveryRoutes(router: Router, deps: DeliveryRouteDeps): void {
  const { deliveries, webhooks, onDeliveryCreated } = deps;

  resource(router, '/api/v1/teams/:team/webhooks/:webhook/deliveries', {
    get: async (req, res) => {
      const { teamId } = requireTeam(req);
      const webhookId = idParam(req, 'webhook');
      const page = pageOf(req);
      if (!(await lookUpWebhook(webhooks, teamId, webhookId))) throw notFound();
      const data = await deliveries.listForWebhook(teamId, webhookId, page);
      if (!page) return void res.json({ data });
      const last = data.length === page.limit ? data[data.length - 1] : undefined;
      res.json({ data, next_cursor: last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null });
    },
  });

  resource(router, '/api/v1/teams/:team/deliveries/:delivery', {
    get: async (req, res) => {
      const { teamId } = requireTeam(req);
      const delivery = await deliveries.findDetail(teamId, deliveryParam(req));
      if (!delivery) throw notFound();
      res.json(delivery);
    },
  });

  resource(router, '/api/v1/teams/:team/deliveries/:delivery/redeliver', {
    post: async (req, res) => {
      const { teamId } = requireTeam(req);
      const original = await deliveries.findForRedelivery(teamId, deliveryParam(req));
      if (!original) throw notFound();
      requireActive(
        await lookUpWebhook(webhooks, teamId, original.webhookId),
        () => new HttpError(409, 'The webhook of this delivery no longer exists.'),
      );
      const delivery = await deliveries.createOne({
        eventId: original.eventId,
        event: original.event,
        teamId,
        webhookId: original.webhookId,
        body: original.body,
        traceContext: captureTraceContext(),
        eventCreatedAt: original.eventCreatedAt,
        redeliveryOf: original.id,
      });
      onDeliveryCreated();
      res.status(201).json(delivery);
    },
  });

  resource(router, '/api/v1/teams/:team/webhooks/:webhook/ping', {
    post: async (req, res) => {
      const { teamId } = requireTeam(req);
      const webhook = requireActive(await lookUpWebhook(webhooks, teamId, idParam(req, 'webhook')), notFound);
      const eventId = randomUUID();
      const createdAt = await deliveries.now();
      const body = Buffer.from(
        JSON.stringify({ id: eventId, event: 'ping', created_at: createdAt, team_id: teamId, webhook: { id: webhook.id, url: webhook.url, events: webhook.events } }),
      );
      const delivery = await deliveries.createOne({
        eventId,
        event: 'ping',
        teamId,
        webhookId: webhook.id,
        body,
        traceContext: captureTraceContext(),
        eventCreatedAt: createdAt,
      });
      onDeliveryCreated();
      res.status(201).json(delivery);
    },
  });
}
