import { randomUUID } from 'node:crypto';
import type { Request, Router } from 'express';
import { z } from 'zod';
import { deliveryLogFilters, type DeliveryLogFilters } from '@worklane/api-contract';
import { listPageLimits } from '@worklane/config';
import { HttpError, createdAnswer, idParam, notFound, parseBody, readPage, requireTeam, resource, rowsToFetch, sendPage, type ListKind, type PageLimits } from '@worklane/http';
import { captureTraceContext } from '@worklane/messaging/trace-context';
import type { WebhookDirectory, WebhookTarget } from '../clients/webhooks';
import { isDeadLetterNotice } from '../data/dead-letters';
import type { DeliveryLogFilter, DeliveryStore } from '../data/deliveries';

export interface DeliveryRouteDeps {
  deliveries: DeliveryStore;
  webhooks: WebhookDirectory;
  /** Called after a ping or redelivery is stored, so it goes out at once. */
  onDeliveryCreated: () => void;
  /** LIST_DEFAULT_LIMIT and LIST_MAX_LIMIT; their defaults when not given. */
  pageLimits?: PageLimits;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A delivery id from the path; anything that is not a UUID cannot exist, so it is 404. */
function deliveryParam(req: Request): string {
  const value = req.params.delivery;
  if (typeof value !== 'string' || !UUID.test(value)) throw notFound();
  return value.toLowerCase();
}

/** A webhook that can receive a ping or redelivery now: it exists (else `missing`) and is active (else 409). */
function requireActive(webhook: WebhookTarget | undefined, missing: () => HttpError): WebhookTarget {
  if (!webhook) throw missing();
  if (!webhook.active) throw new HttpError(409, 'The webhook is inactive; activate it to receive deliveries.', undefined, {}, 'webhook_inactive');
  return webhook;
}

/**
 * A webhook's delivery log, newest first, paged by default (an extension list). The key is the
 * last row's (created_at, id): created_at as PostgreSQL wrote it, with its microseconds.
 */
const DELIVERY_LOG: ListKind<[string, string]> = {
  name: 'deliveries',
  key: z.tuple([z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/), z.string().regex(UUID)]),
};

/** The log's query filters as the store reads them. */
function logFilter(query: DeliveryLogFilters): DeliveryLogFilter {
  return {
    ...(query.status ? { status: query.status } : {}),
    ...(query.event ? { event: query.event } : {}),
    ...(query.event_id ? { eventId: query.event_id.toLowerCase() } : {}),
    ...(query.issue_id !== undefined ? { issueId: query.issue_id } : {}),
    ...(query.created_after ? { createdAfter: query.created_after } : {}),
    ...(query.created_before ? { createdBefore: query.created_before } : {}),
  };
}

export function deliveryRoutes(router: Router, deps: DeliveryRouteDeps): void {
  const { deliveries, webhooks, onDeliveryCreated } = deps;
  const pageLimits = deps.pageLimits ?? listPageLimits();

  resource(router, '/api/v1/teams/:team/webhooks/:webhook/deliveries', {
    get: async (req, res) => {
      const { teamId } = requireTeam(req);
      const webhookId = idParam(req, 'webhook');
      const page = readPage(req, DELIVERY_LOG, pageLimits, 'always')!;
      const filter = logFilter(parseBody(deliveryLogFilters, req.query));
      if (!(await webhooks.getWebhook(teamId, webhookId))) throw notFound();
      const after = page.after && { createdAt: page.after[0], id: page.after[1] };
      const rows = await deliveries.listForWebhook(teamId, webhookId, { limit: rowsToFetch(page), ...(after ? { after } : {}) }, filter);
      sendPage(req, res, DELIVERY_LOG, page, rows, (delivery) => [delivery.created_at, delivery.id]);
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
      if (isDeadLetterNotice(original.body))
        throw new HttpError(409, 'This event was dead-lettered: it was never published, so there is nothing to redeliver.', undefined, {}, 'event_dead_lettered');
      requireActive(
        await webhooks.getWebhook(teamId, original.webhookId),
        () => new HttpError(409, 'The webhook of this delivery no longer exists.', undefined, {}, 'webhook_deleted'),
      );
      const answer = createdAnswer(req, res);
      const delivery = await deliveries.createOne(
        {
          eventId: original.eventId,
          event: original.event,
          teamId,
          webhookId: original.webhookId,
          body: original.body,
          traceContext: captureTraceContext(),
          eventCreatedAt: original.eventCreatedAt,
          redeliveryOf: original.id,
        },
        answer.recordIn,
      );
      onDeliveryCreated();
      answer.send(delivery);
    },
  });

  resource(router, '/api/v1/teams/:team/webhooks/:webhook/ping', {
    post: async (req, res) => {
      const { teamId } = requireTeam(req);
      const webhook = requireActive(await webhooks.getWebhook(teamId, idParam(req, 'webhook')), notFound);
      const eventId = randomUUID();
      const createdAt = await deliveries.now();
      const body = Buffer.from(
        JSON.stringify({ id: eventId, event: 'ping', created_at: createdAt, team_id: teamId, webhook: { id: webhook.id, url: webhook.url, events: webhook.events } }),
      );
      const answer = createdAnswer(req, res);
      const delivery = await deliveries.createOne(
        {
          eventId,
          event: 'ping',
          teamId,
          webhookId: webhook.id,
          body,
          traceContext: captureTraceContext(),
          eventCreatedAt: createdAt,
        },
        answer.recordIn,
      );
      onDeliveryCreated();
      answer.send(delivery);
    },
  });
}
