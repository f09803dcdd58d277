// One webhook's settings: the edit form (/edit) and the secret rotation (/secret), whose new
// secret is shown once, on the answer to the rotation itself.
import type { Request, Router } from 'express';
import { formString, pageContext, sendPage } from '../context';
import type { ConsoleDeps } from '../deps';
import { editWebhookPage, formValuesOf } from '../views/webhook-form';
import { OVERLAP_CHOICES, rotateSecretPage, type RotateSecretValues } from '../views/webhook-secret';
import { apiData, apiOf, callApi, errorBody, fieldErrors, teamOf } from './api-calls';
import { positiveId } from './params';
import { changesOf, loadScopeChoices, readWebhookForm, settingsOf } from './webhook-input';

const EDIT_FIELDS = new Set(['url', 'events', 'active', 'description', 'filters', 'rate_limit_per_second', 'operational_events', 'ed25519_signing']);

export function mountWebhookSettings(router: Router, deps: ConsoleDeps): void {
  const { services, assets } = deps;

  const webhookPath = (req: Request, id: number) => `/teams/${req.team!.team_id}/settings/webhooks/${id}`;
  const getWebhook = (req: Request, id: number) => apiData(apiOf(services, req).GET('/teams/{team}/webhooks/{webhook}', { params: { path: { ...teamOf(req), webhook: id } } }));

  router.get('/teams/:team/settings/webhooks/:webhook/edit', async (req, res) => {
    const id = positiveId(req.params.webhook);
    const webhook = await getWebhook(req, id);
    const scope = await loadScopeChoices(apiOf(services, req), req);
    sendPage(res, 200, editWebhookPage(pageContext(req, assets, 'webhooks'), { webhook, values: formValuesOf(webhook), scope }));
  });

  router.post('/teams/:team/settings/webhooks/:webhook/edit', async (req, res) => {
    const id = positiveId(req.params.webhook);
    const api = apiOf(services, req);
    const webhook = await getWebhook(req, id);
    const values = readWebhookForm(req.body);
    const refused = async (status: number, errors: Record<string, string[]>) => {
      const other = Object.entries(errors).filter(([name]) => !EDIT_FIELDS.has(name));
      sendPage(
        res,
        status,
        editWebhookPage(pageContext(req, assets, 'webhooks'), {
          webhook,
          values,
          scope: await loadScopeChoices(api, req),
          errors,
          notice: {
            kind: 'error',
            text:
              other.length > 0
                ? `The webhook was not changed: ${other.map(([, messages]) => messages.join(' ')).join(' ')}`
                : 'The webhook was not changed. Correct the fields marked below.',
          },
        }),
      );
    };
    const { settings, errors } = settingsOf(values);
    if (!settings) return refused(422, errors ?? {});
    const changes = changesOf(webhook, settings);
    if (Object.keys(changes).length === 0) return res.redirect(303, `${webhookPath(req, id)}?notice=webhook-unchanged`);
    const response = await callApi(api.PATCH('/teams/{team}/webhooks/{webhook}', { params: { path: { ...teamOf(req), webhook: id } }, body: changes }), [409, 422]);
    if (response.response.status >= 400) {
      const body = errorBody(response);
      const fields = fieldErrors(body);
      return refused(response.response.status, Object.keys(fields).length > 0 ? fields : { request: [body?.message ?? 'The change was refused.'] });
    }
    res.redirect(303, `${webhookPath(req, id)}?notice=webhook-updated`);
  });

  const emptyRotation: RotateSecretValues = { secret: '', overlap_seconds: String(OVERLAP_CHOICES.default) };

  router.get('/teams/:team/settings/webhooks/:webhook/secret', async (req, res) => {
    const webhook = await getWebhook(req, positiveId(req.params.webhook));
    sendPage(res, 200, rotateSecretPage(pageContext(req, assets, 'webhooks'), { webhook, values: emptyRotation }));
  });

  router.post('/teams/:team/settings/webhooks/:webhook/secret', async (req, res) => {
    const id = positiveId(req.params.webhook);
    const values: RotateSecretValues = { secret: formString(req.body, 'secret'), overlap_seconds: formString(req.body, 'overlap_seconds') };
    const overlap = /^\d{1,9}$/.test(values.overlap_seconds) ? Number(values.overlap_seconds) : undefined;
    const body = { ...(values.secret ? { secret: values.secret } : {}), ...(overlap !== undefined ? { overlap_seconds: overlap } : {}) };
    const response = await callApi(
      apiOf(services, req).POST('/teams/{team}/webhooks/{webhook}/secret/rotate', { params: { path: { ...teamOf(req), webhook: id } }, body }),
      [409, 422],
    );
    if (!response.data) {
      const webhook = await getWebhook(req, id);
      const problem = errorBody(response);
      return sendPage(
        res,
        response.response.status,
        rotateSecretPage(pageContext(req, assets, 'webhooks'), {
          webhook,
          values,
          errors: fieldErrors(problem),
          notice: { kind: 'error', text: problem?.message ? `The secret was not rotated. ${problem.message}` : 'The secret was not rotated.' },
        }),
      );
    }
    // The new secret is in this answer only: shown here, never put in a URL or stored.
    const { secret, ...webhook } = response.data;
    sendPage(
      res,
      200,
      rotateSecretPage(pageContext(req, assets, 'webhooks'), { webhook, values: emptyRotation, rotated: { secret, overlapSeconds: overlap ?? OVERLAP_CHOICES.default } }),
    );
  });
}
