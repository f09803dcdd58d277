import type { Router } from 'express';
import { recoverWebhookInput } from '@worklane/api-contract';
import { HttpError, bodyOf, createdAnswer, idParam, notFound, parseBody, requireTeam, resource, validationFailed } from '@worklane/http';
import type { WebhookDirectory } from '../clients/webhooks';
import type { RecoveryRecord, RecoveryStore } from '../recovery/store';
import { recoveryPace } from '../recovery/worker';

export interface RecoveryRouteDeps {
  recoveries: RecoveryStore;
  webhooks: WebhookDirectory;
  /** Bounds and default pace of a job (DELIVERY_RECOVERY_*). */
  recovery: { maxEvents: number; defaultPerSecond: number };
  /** A job was created: start it now. */
  onRecoveryCreated: () => void;
}

const recoveryPath = (teamId: number, recovery: RecoveryRecord) => `/api/v1/teams/${teamId}/webhooks/${recovery.webhook_id}/recoveries/${recovery.id}`;

/** `POST .../webhooks/{webhook}/recover` starts a recovery job; `GET .../recoveries/{recovery}` shows its progress. */
export function recoveryRoutes(router: Router, deps: RecoveryRouteDeps): void {
  const { recoveries, webhooks } = deps;

  resource(router, '/api/v1/teams/:team/webhooks/:webhook/recover', {
    post: async (req, res) => {
      const { teamId } = requireTeam(req);
      const webhookId = idParam(req, 'webhook');
      const input = parseBody(recoverWebhookInput, bodyOf(req));
      const webhook = await webhooks.getWebhook(teamId, webhookId);
      if (!webhook) throw notFound();
      if (!webhook.active) throw new HttpError(409, 'The webhook is inactive; activate it before recovering its deliveries.', undefined, {}, 'webhook_inactive');
      const answer = createdAnswer<RecoveryRecord>(req, res, (recovery) => recoveryPath(teamId, recovery), 202);
      const created = await recoveries.create(
        {
          teamId,
          webhookId,
          since: input.since,
          until: input.until,
          pacePerSecond: recoveryPace(webhook.rateLimitPerSecond, deps.recovery.defaultPerSecond),
          maxEvents: deps.recovery.maxEvents,
        },
        answer.recordIn,
      );
      switch (created.outcome) {
        case 'empty_window':
          throw validationFailed({ since: ['The since field must be a time before until, and before now.'] });
        case 'too_large': {
          const message = `The window holds more than ${created.maxEvents} failed events, more than one recovery may send again; ask for a shorter window.`;
          throw new HttpError(422, message, { since: [message] }, {}, 'recovery_too_large');
        }
        case 'busy':
          throw new HttpError(
            409,
            `Recovery ${created.recovery.id} of this webhook is still ${created.recovery.status}; wait for it to finish, or ask for the same window to follow it.`,
            undefined,
            {},
            'recovery_in_progress',
          );
        case 'created':
          deps.onRecoveryCreated();
          return answer.send(created.recovery);
        case 'existing':
          return answer.send(created.recovery);
      }
    },
  });

  resource(router, '/api/v1/teams/:team/webhooks/:webhook/recoveries/:recovery', {
    get: async (req, res) => {
      const { teamId } = requireTeam(req);
      const recovery = await recoveries.find(teamId, idParam(req, 'webhook'), idParam(req, 'recovery'));
      if (!recovery) throw notFound();
      res.json(recovery);
    },
  });
}
