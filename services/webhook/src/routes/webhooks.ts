import type { Request, Router } from 'express';
import { createWebhookInput, updateWebhookInput } from '@worklane/api-contract';
import type { Pool } from '@worklane/db';
import {
  bodyOf,
  byId,
  createdAnswer,
  idParam,
  notFound,
  parseBody,
  readPage,
  requireTeam,
  resource,
  rowsToFetch,
  sendPage,
  withQuotaAnswer,
  type PageLimits,
} from '@worklane/http';
import type { Logger } from '@worklane/observability';
import type { AddressRefusal, SecretBox } from '@worklane/webhooks';
import { createWebhook, deleteWebhook, findWebhook, listWebhooks, updateWebhook, type Webhook } from '../data/webhooks';
import { requirePublicReceiver, type ReceiverPolicy } from '../domain/receiver-address';
import { sealSecret } from '../domain/secrets';

export interface WebhookRouteDeps {
  pool: Pool;
  logger: Logger;
  secretBox: SecretBox;
  receiverPolicy: ReceiverPolicy;
  onUrlRefused: (reason: AddressRefusal) => void;
  pageLimits: PageLimits;
  /** TEAM_MAX_WEBHOOKS. */
  maxWebhooks: number;
}

/** Webhooks newest first: the whole set unless `limit` or `cursor` asks for a page. */
const WEBHOOK_LIST = byId('webhooks');

/** The path's team, which must be the caller's (403); a non-integer team is 404 like any malformed id. */
function teamOf(req: Request): number {
  idParam(req, 'team');
  return requireTeam(req).teamId;
}

export function webhookRoutes(router: Router, deps: WebhookRouteDeps): void {
  const { pool, secretBox } = deps;
  const checkUrl = (url: string) => requirePublicReceiver(url, deps.receiverPolicy, deps.logger, deps.onUrlRefused);

  resource(router, '/api/v1/teams/:team/webhooks', {
    get: async (req, res) => {
      const teamId = teamOf(req);
      const page = readPage(req, WEBHOOK_LIST, deps.pageLimits, 'on-request');
      if (!page) return void res.json({ data: await listWebhooks(pool, teamId) });
      const rows = await listWebhooks(pool, teamId, { take: rowsToFetch(page), beforeId: page.after });
      sendPage(req, res, WEBHOOK_LIST, page, rows, (webhook) => webhook.id);
    },
    post: async (req, res) => {
      const teamId = teamOf(req);
      const input = parseBody(createWebhookInput, bodyOf(req));
      await checkUrl(input.url);
      const answer = createdAnswer(req, res, (webhook: Webhook) => `/api/v1/teams/${teamId}/webhooks/${webhook.id}`);
      const webhook = await withQuotaAnswer(() =>
        createWebhook(
          pool,
          teamId,
          {
            url: input.url,
            events: input.events,
            active: input.active,
            secretSealed: input.secret == null ? null : sealSecret(secretBox, input.secret, teamId),
          },
          deps.maxWebhooks,
          answer.recordIn,
        ),
      );
      answer.send(webhook);
    },
  });

  resource(router, '/api/v1/teams/:team/webhooks/:webhook', {
    get: async (req, res) => {
      const webhook = await findWebhook(pool, teamOf(req), idParam(req, 'webhook'));
      if (!webhook) throw notFound();
      res.json(webhook);
    },
    patch: async (req, res) => {
      const teamId = teamOf(req);
      const webhookId = idParam(req, 'webhook');
      const changes = parseBody(updateWebhookInput, bodyOf(req));
      if (changes.url !== undefined) await checkUrl(changes.url);
      const webhook = await updateWebhook(pool, teamId, webhookId, {
        url: changes.url,
        events: changes.events,
        active: changes.active,
        secretSealed: changes.secret === undefined ? undefined : changes.secret === null ? null : sealSecret(secretBox, changes.secret, teamId),
      });
      if (!webhook) throw notFound();
      res.json(webhook);
    },
    delete: async (req, res) => {
      if (!(await deleteWebhook(pool, teamOf(req), idParam(req, 'webhook')))) throw notFound();
      res.status(204).end();
    },
  });
}
