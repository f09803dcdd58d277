// The webhooks tab (/teams/:team/settings/webhooks): the team's webhooks, each with its delivery
// log; add, switch on and off, delete, ping and redeliver.
import type { Request, Response, Router } from 'express';
import type { ApiErrorBody } from '../clients/services';
import { formString, pageContext, pageNotFound, sendPage } from '../context';
import type { ConsoleDeps } from '../deps';
import { ServiceUnavailableError } from '../errors';
import { localValue, readLogFilters, utcInstant } from '../log-filters';
import { noticeFrom } from '../notices';
import type { WebhookHealth } from '../resources';
import { deliveryPage } from '../views/delivery';
import { confirmPage } from '../views/pages';
import { recoveryPage, type RecoverFormValues } from '../views/recovery';
import { EMPTY_WEBHOOK_FORM, newWebhookPage } from '../views/webhook-form';
import { webhookPage, webhooksPage, type DeliveryLogEntry } from '../views/webhooks';
import { apiData, apiOf, callApi, CONCURRENCY, errorBody, fieldErrors, mapLimit, teamOf } from './api-calls';
import { deliveryId, positiveId } from './params';
import { loadScopeChoices, readWebhookForm, settingsOf } from './webhook-input';
import { mountWebhookSettings } from './webhook-settings';

/** Deliveries per log page, each shown with its attempts. */
const LOG_PAGE_SIZE = 20;

/** The fields of the webhook form: an API message about any other goes in the page's notice. */
const FORM_FIELDS = new Set(['url', 'events', 'secret', 'active', 'description', 'filters', 'rate_limit_per_second', 'operational_events', 'ed25519_signing']);

export function mountWebhooks(router: Router, deps: ConsoleDeps): void {
  const { services, assets, logger } = deps;

  const webhooksPath = (req: Request) => `/teams/${req.team!.team_id}/settings/webhooks`;

  router.get('/teams/:team/settings/webhooks', async (req, res) => {
    const webhooks = (await apiData(apiOf(services, req).GET('/teams/{team}/webhooks', { params: { path: teamOf(req) } }))).data;
    sendPage(res, 200, webhooksPage(pageContext(req, assets, 'webhooks'), { webhooks, notice: noticeFrom(req.query.notice) }));
  });

  router.get('/teams/:team/settings/webhooks/new', async (req, res) => {
    const scope = await loadScopeChoices(apiOf(services, req), req);
    sendPage(res, 200, newWebhookPage(pageContext(req, assets, 'webhooks'), { values: EMPTY_WEBHOOK_FORM, scope }));
  });

  router.post('/teams/:team/settings/webhooks', async (req, res) => {
    const api = apiOf(services, req);
    const values = readWebhookForm(req.body);
    const refused = async (status: number, errors: Record<string, string[]>) => {
      const other = Object.entries(errors).filter(([name]) => !FORM_FIELDS.has(name));
      sendPage(
        res,
        status,
        newWebhookPage(pageContext(req, assets, 'webhooks'), {
          values,
          scope: await loadScopeChoices(api, req),
          errors,
          notice: {
            kind: 'error',
            text:
              other.length > 0
                ? `The webhook was not added: ${other.map(([, messages]) => messages.join(' ')).join(' ')}`
                : 'The webhook was not added. Correct the fields marked below.',
          },
        }),
      );
    };
    const { settings, errors } = settingsOf(values);
    if (!settings) return refused(422, errors ?? {});
    // Exactly what an API client would send; the webhook service applies its rules and messages.
    const body = { ...settings, ...(values.secret ? { secret: values.secret } : {}) };
    const response = await callApi(api.POST('/teams/{team}/webhooks', { params: { path: teamOf(req) }, body }), [409, 422]);
    if (!response.data)
      return refused(response.response.status, {
        ...fieldErrors(errorBody(response)),
        ...(response.response.status === 409 ? { quota: [errorBody(response)?.message ?? 'The team has as many webhooks as it may.'] } : {}),
      });
    res.redirect(303, `${webhooksPath(req)}/${response.data.id}?notice=webhook-created`);
  });

  const webhookId = (req: Request) => positiveId(req.params.webhook);

  /** What a webhook page shows besides the webhook, the log and its filters. */
  interface WebhookPageExtras {
    notice?: { kind: 'success' | 'error' | 'info'; text: string };
    recover?: { values: RecoverFormValues; errors?: Record<string, string[]> };
  }

  async function renderWebhook(req: Request, res: Response, status: number, extras: WebhookPageExtras = {}) {
    const id = webhookId(req);
    const api = apiOf(services, req);
    const path = { ...teamOf(req), webhook: id };
    const webhook = await apiData(api.GET('/teams/{team}/webhooks/{webhook}', { params: { path } }));
    const filters = readLogFilters(req.query as Record<string, unknown>);
    let log: DeliveryLogEntry[] | undefined;
    let olderCursor: string | undefined;
    try {
      const cursor = typeof req.query.cursor === 'string' && /^[A-Za-z0-9_=-]{1,200}$/.test(req.query.cursor) ? req.query.cursor : undefined;
      const list = await apiData(api.GET('/teams/{team}/webhooks/{webhook}/deliveries', { params: { path, query: { limit: LOG_PAGE_SIZE, cursor, ...filters.query } } }));
      olderCursor = list.next_cursor ?? undefined;
      log = await mapLimit(list.data.slice(0, LOG_PAGE_SIZE), CONCURRENCY, async (delivery) => {
        // Only the detail carries the attempts; a delivery with none needs no second call.
        if (delivery.attempt_count === 0) return { delivery, attempts: [] };
        try {
          const detail = await apiData(api.GET('/teams/{team}/deliveries/{delivery}', { params: { path: { ...teamOf(req), delivery: delivery.id } } }));
          return { delivery: detail, attempts: detail.attempts };
        } catch (error) {
          if (!(error instanceof ServiceUnavailableError)) throw error;
          return { delivery, attempts: undefined };
        }
      });
    } catch (error) {
      if (!(error instanceof ServiceUnavailableError)) throw error;
      logger.warn({ err: error.reason, service: error.service }, 'delivery log unavailable');
    }
    let health: WebhookHealth | undefined;
    try {
      health = await apiData(api.GET('/teams/{team}/webhooks/{webhook}/health', { params: { path } }));
    } catch (error) {
      if (!(error instanceof ServiceUnavailableError)) throw error;
      logger.warn({ err: error.reason, service: error.service }, 'webhook health unavailable');
    }
    const scoped = webhook.filters.organization_ids.length > 0 || webhook.filters.project_ids.length > 0;
    const scope = scoped ? await loadScopeChoices(api, req) : undefined;
    const recover = extras.recover ?? { values: { since: localValue(defaultRecoverySince(health)), until: '' } };
    sendPage(
      res,
      status,
      webhookPage(pageContext(req, assets, 'webhooks'), {
        webhook,
        log,
        olderCursor,
        scope,
        health,
        recover,
        filters: { values: filters.values, errors: filters.errors },
        notice: extras.notice ?? noticeFrom(req.query.notice),
      }),
    );
  }

  router.get('/teams/:team/settings/webhooks/:webhook', (req, res) => renderWebhook(req, res, 200));

  /** A refusal the person can read (409, 422...): the webhook page again, with the API's message. */
  const refusal = (body: ApiErrorBody | undefined, fallback: string) => ({ kind: 'error' as const, text: body?.message ? `${fallback} ${body.message}` : fallback });

  router.post('/teams/:team/settings/webhooks/:webhook/active', async (req, res) => {
    const id = webhookId(req);
    const active = formString(req.body, 'active') === 'true';
    const response = await callApi(
      apiOf(services, req).PATCH('/teams/{team}/webhooks/{webhook}', { params: { path: { ...teamOf(req), webhook: id } }, body: { active } }),
      [409, 422],
    );
    if (response.response.status >= 400) return renderWebhook(req, res, response.response.status, { notice: refusal(errorBody(response), 'The webhook was not changed.') });
    const notice = active ? 'webhook-activated' : 'webhook-deactivated';
    const target = formString(req.body, 'return_to') === 'list' ? webhooksPath(req) : `${webhooksPath(req)}/${id}`;
    res.redirect(303, `${target}?notice=${notice}`);
  });

  router.post('/teams/:team/settings/webhooks/:webhook/delete', async (req, res) => {
    const id = webhookId(req);
    if (formString(req.body, 'confirmed') !== 'yes') {
      const webhook = await apiData(apiOf(services, req).GET('/teams/{team}/webhooks/{webhook}', { params: { path: { ...teamOf(req), webhook: id } } }));
      return sendPage(
        res,
        200,
        confirmPage(pageContext(req, assets, 'webhooks'), {
          title: 'Delete webhook',
          question: `Delete the webhook for ${webhook.url}?`,
          detail: 'Deliveries to it stop at once, including retries that are waiting. This cannot be undone.',
          action: `${webhooksPath(req)}/${id}/delete`,
          button: 'Delete webhook',
          cancel: `${webhooksPath(req)}/${id}`,
        }),
      );
    }
    await callApi(apiOf(services, req).DELETE('/teams/{team}/webhooks/{webhook}', { params: { path: { ...teamOf(req), webhook: id } } }));
    res.redirect(303, `${webhooksPath(req)}?notice=webhook-deleted`);
  });

  router.post('/teams/:team/settings/webhooks/:webhook/ping', async (req, res) => {
    const id = webhookId(req);
    const response = await callApi(apiOf(services, req).POST('/teams/{team}/webhooks/{webhook}/ping', { params: { path: { ...teamOf(req), webhook: id } } }), [409, 422]);
    if (response.response.status >= 400) return renderWebhook(req, res, response.response.status, { notice: refusal(errorBody(response), 'The ping was not sent.') });
    res.redirect(303, `${webhooksPath(req)}/${id}?notice=ping-sent`);
  });

  router.post('/teams/:team/settings/webhooks/:webhook/deliveries/:delivery/redeliver', async (req, res) => {
    const id = webhookId(req);
    const delivery = deliveryId(req.params.delivery);
    const response = await callApi(apiOf(services, req).POST('/teams/{team}/deliveries/{delivery}/redeliver', { params: { path: { ...teamOf(req), delivery } } }), [409, 422]);
    if (response.response.status >= 400) return renderWebhook(req, res, response.response.status, { notice: refusal(errorBody(response), 'The delivery was not sent again.') });
    res.redirect(303, `${webhooksPath(req)}/${id}?notice=redelivery-queued`);
  });

  router.post('/teams/:team/settings/webhooks/:webhook/recover', async (req, res) => {
    const id = webhookId(req);
    const values: RecoverFormValues = { since: formString(req.body, 'since').trim(), until: formString(req.body, 'until').trim() };
    const since = utcInstant(values.since);
    const until = values.until === '' ? undefined : utcInstant(values.until);
    const errors: Record<string, string[]> = {};
    if (!since) errors.since = ['Enter the date and time the outage began.'];
    if (values.until !== '' && !until) errors.until = ['Enter a date and time, or leave the field empty for now.'];
    const notRecovered = (text: string) => ({ kind: 'error' as const, text: `Nothing was recovered. ${text}` });
    if (!since || Object.keys(errors).length > 0) return renderWebhook(req, res, 422, { notice: notRecovered('Correct the window below.'), recover: { values, errors } });
    const response = await callApi(
      apiOf(services, req).POST('/teams/{team}/webhooks/{webhook}/recover', {
        params: { path: { ...teamOf(req), webhook: id } },
        body: { since, ...(until ? { until } : {}) },
      }),
      [409, 422],
    );
    if (!response.data) {
      const body = errorBody(response);
      const fields = fieldErrors(body);
      return renderWebhook(req, res, response.response.status, { notice: notRecovered(body?.message ?? ''), recover: { values, errors: fields } });
    }
    res.redirect(303, `${webhooksPath(req)}/${id}/recoveries/${response.data.id}`);
  });

  router.get('/teams/:team/settings/webhooks/:webhook/recoveries/:recovery', async (req, res) => {
    const id = webhookId(req);
    const api = apiOf(services, req);
    const path = { ...teamOf(req), webhook: id };
    const [webhook, recovery] = await Promise.all([
      apiData(api.GET('/teams/{team}/webhooks/{webhook}', { params: { path } })),
      apiData(api.GET('/teams/{team}/webhooks/{webhook}/recoveries/{recovery}', { params: { path: { ...path, recovery: positiveId(req.params.recovery) } } })),
    ]);
    sendPage(res, 200, recoveryPage(pageContext(req, assets, 'webhooks'), { webhook, recovery }));
  });

  router.get('/teams/:team/settings/webhooks/:webhook/deliveries/:delivery', async (req, res) => {
    const id = webhookId(req);
    const api = apiOf(services, req);
    const [webhook, delivery] = await Promise.all([
      apiData(api.GET('/teams/{team}/webhooks/{webhook}', { params: { path: { ...teamOf(req), webhook: id } } })),
      apiData(api.GET('/teams/{team}/deliveries/{delivery}', { params: { path: { ...teamOf(req), delivery: deliveryId(req.params.delivery) } } })),
    ]);
    // A delivery of another webhook of the team is not shown under this one.
    if (delivery.webhook_id !== webhook.id) throw pageNotFound();
    sendPage(res, 200, deliveryPage(pageContext(req, assets, 'webhooks'), { webhook, delivery }));
  });

  mountWebhookSettings(router, deps);
}

/**
 * Where a recovery most likely starts: a few minutes before the failing streak began (a delivery is
 * created before its first attempt) or, once the streak is over (the webhook was switched off), the
 * last success; else a day ago. Re-sending only failed deliveries, a window that starts early costs
 * nothing.
 */
function defaultRecoverySince(health: WebhookHealth | undefined): Date {
  const start = Date.parse(health?.failing_since ?? health?.last_success_at ?? '');
  if (Number.isNaN(start)) return new Date(Math.floor(Date.now() / 1000) * 1000 - 24 * 3_600_000);
  const minute = 60_000;
  return new Date(Math.floor((start - 5 * minute) / minute) * minute);
}
