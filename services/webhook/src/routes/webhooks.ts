import type { Request, Router } from 'express';
import { createWebhookInput, rotateSecretInput, updateWebhookInput } from '@worklane/api-contract';
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
  validationFailed,
  withQuotaAnswer,
  type PageLimits,
} from '@worklane/http';
import type { Logger } from '@worklane/observability';
import type { AddressRefusal, SecretBox } from '@worklane/webhooks';
import { createWebhook, deleteWebhook, findWebhook, listWebhooks, rotateSecret, updateWebhook, type Webhook } from '../data/webhooks';
import { requirePublicReceiver, type ReceiverPolicy } from '../domain/receiver-address';
import { RotationLimitError, type RotationLimits } from '../domain/rotation';
import { generateSecret, newSealedEd25519Key, openSecret, sealSecret } from '../domain/secrets';
import type { WebhookChangeNotifier } from '../events/change-notices';

export interface WebhookRouteDeps {
  pool: Pool;
  logger: Logger;
  secretBox: SecretBox;
  receiverPolicy: ReceiverPolicy;
  onUrlRefused: (reason: AddressRefusal) => void;
  pageLimits: PageLimits;
  /** TEAM_MAX_WEBHOOKS. */
  maxWebhooks: number;
  /** WEBHOOK_PREVIOUS_SECRETS_MAX and the overlap of WEBHOOK_SECRET_OVERLAP_*_SECONDS. */
  rotation: RotationLimits;
  /** WEBHOOK_RATE_LIMIT_MAX_PER_SECOND. */
  maxRateLimitPerSecond: number;
  /** Told of every committed change before the call is answered (the delivery service's cache). */
  changes: WebhookChangeNotifier;
}

/** Webhooks newest first: the whole set unless `limit` or `cursor` asks for a page. */
const WEBHOOK_LIST = byId('webhooks');

/** The path's team, which must be the caller's (403); a non-integer team is 404 like any malformed id. */
function teamOf(req: Request): number {
  idParam(req, 'team');
  return requireTeam(req).teamId;
}

/**
 * POST .../secret/rotate. Its answer holds the new secret: kept for an Idempotency-Key, it is
 * stored sealed (answerSeal), so a retry gets the same secret and the webhook rotates once.
 */
export function secretRotationRoutes(router: Router, deps: Pick<WebhookRouteDeps, 'pool' | 'secretBox' | 'rotation' | 'changes'>): void {
  const { pool, secretBox, rotation, changes: notifier } = deps;
  resource(router, '/api/v1/teams/:team/webhooks/:webhook/secret/rotate', {
    post: async (req, res) => {
      const teamId = teamOf(req);
      const webhookId = idParam(req, 'webhook');
      const input = parseBody(rotateSecretInput, bodyOf(req));
      const overlapSeconds = input.overlap_seconds ?? rotation.defaultOverlapSeconds;
      if (overlapSeconds > rotation.maxOverlapSeconds) {
        throw validationFailed({ overlap_seconds: [`The overlap_seconds field must not be greater than ${rotation.maxOverlapSeconds}.`] });
      }
      const secret = input.secret ?? generateSecret();
      const outcome = await rotateSecret(pool, teamId, webhookId, {
        secretSealed: sealSecret(secretBox, secret, teamId),
        overlapSeconds,
        maxPreviousSecrets: rotation.maxPreviousSecrets,
        isCurrent: (currentSealed) => openSecret(secretBox, currentSealed, teamId) === secret,
      });
      switch (outcome.outcome) {
        case 'not_found':
          throw notFound();
        case 'unchanged':
          throw validationFailed({ secret: ['The secret field must differ from the current secret.'] });
        case 'limit':
          throw new RotationLimitError(outcome.maxPreviousSecrets);
        case 'rotated':
          await notifier.notify({ team_id: teamId, webhook_id: webhookId, change: 'rotated' });
          // Never cached anywhere on the way: the secret is in this answer only.
          res.set('Cache-Control', 'no-store');
          res.json({ ...outcome.webhook, secret });
      }
    },
  });
}

export function webhookRoutes(router: Router, deps: WebhookRouteDeps): void {
  const { pool, secretBox, changes: notifier } = deps;
  const checkUrl = (url: string) => requirePublicReceiver(url, deps.receiverPolicy, deps.logger, deps.onUrlRefused);
  const checkRateLimit = (rateLimit: number | null | undefined) => {
    if (rateLimit != null && rateLimit > deps.maxRateLimitPerSecond) {
      throw validationFailed({ rate_limit_per_second: [`The rate_limit_per_second field must not be greater than ${deps.maxRateLimitPerSecond}.`] });
    }
  };

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
      checkRateLimit(input.rate_limit_per_second);
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
            description: input.description,
            filters: input.filters,
            rateLimitPerSecond: input.rate_limit_per_second,
            operationalEvents: input.operational_events,
            ed25519: input.ed25519_signing ? newSealedEd25519Key(secretBox, teamId) : null,
          },
          deps.maxWebhooks,
          answer.recordIn,
        ),
      );
      await notifier.notify({ team_id: teamId, webhook_id: webhook.id, change: 'created' });
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
      checkRateLimit(changes.rate_limit_per_second);
      if (changes.url !== undefined) await checkUrl(changes.url);
      const webhook = await updateWebhook(pool, teamId, webhookId, {
        url: changes.url,
        events: changes.events,
        active: changes.active,
        secretSealed: changes.secret === undefined ? undefined : changes.secret === null ? null : sealSecret(secretBox, changes.secret, teamId),
        description: changes.description,
        filters: changes.filters,
        rateLimitPerSecond: changes.rate_limit_per_second,
        operationalEvents: changes.operational_events,
        ed25519: changes.ed25519_signing === undefined ? undefined : { enabled: changes.ed25519_signing, newKey: () => newSealedEd25519Key(secretBox, teamId) },
      });
      if (!webhook) throw notFound();
      await notifier.notify({ team_id: teamId, webhook_id: webhookId, change: 'updated' });
      res.json(webhook);
    },
    delete: async (req, res) => {
      const teamId = teamOf(req);
      const webhookId = idParam(req, 'webhook');
      if (!(await deleteWebhook(pool, teamId, webhookId))) throw notFound();
      await notifier.notify({ team_id: teamId, webhook_id: webhookId, change: 'deleted' });
      res.status(204).end();
    },
  });
}
