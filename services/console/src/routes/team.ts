import type { Request, Response, Router } from 'express';
import { grpc } from '@worklane/grpc';
import { AccountRequestError } from '../clients/accounts';
import type { ApiErrorBody } from '../clients/services';
import { formList, formString, pageContext, pageNotFound, sendPage } from '../context';
import { ServiceUnavailableError } from '../errors';
import { noticeFrom } from '../notices';
import type { Delivery, DeliveryDetail, Issue, List, Organization, Project, Webhook } from '../resources';
import { noTeamsPage, overviewPage } from '../views/overview';
import { confirmPage } from '../views/pages';
import { tokensPage } from '../views/tokens';
import { newWebhookPage, webhookPage, webhooksPage, type DeliveryLogEntry, type WebhookFormValues } from '../views/webhooks';
import { callApi, fieldErrors, mapLimit, teamApi } from './api-calls';
import type { ConsoleDeps } from '../app';

/** Bounds on the fan-out of one overview page. */
const OVERVIEW_MAX_ORGANIZATIONS = 50;
const OVERVIEW_MAX_PROJECTS_FOR_ISSUES = 25;
const OVERVIEW_RECENT_ISSUES = 10;
/** Deliveries per log page, each shown with its attempts. */
const LOG_PAGE_SIZE = 20;
const CONCURRENCY = 4;

const positiveId = (value: unknown): number => {
  if (typeof value !== 'string' || !/^[1-9]\d{0,15}$/.test(value)) throw pageNotFound();
  return Number(value);
};

/** The id of a delivery as the delivery service writes it (an integer or an opaque id). */
const deliveryId = (value: unknown): string => {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(value)) throw pageNotFound();
  return value;
};

export function mountTeamPages(router: Router, deps: ConsoleDeps): void {
  const { accounts, services, assets, logger } = deps;

  router.get('/teams', (req, res) => {
    if (!req.viewer) return res.redirect(303, '/login');
    const first = req.viewer.memberships[0];
    if (first) return res.redirect(303, `/teams/${first.team_id}`);
    sendPage(res, 200, noTeamsPage(pageContext(req, assets)));
  });

  // Every page of a team: signed in, and a member of that team. Anyone else sees "not found",
  // whether or not the team exists.
  router.use('/teams/:team', (req, res, next) => {
    if (!req.viewer) {
      if (req.method === 'GET' || req.method === 'HEAD') return res.redirect(303, `/login?next=${encodeURIComponent(req.originalUrl)}`);
      return res.redirect(303, '/login');
    }
    const teamId = positiveId(req.params.team);
    const membership = req.viewer.memberships.find((candidate) => candidate.team_id === teamId);
    if (!membership) throw pageNotFound();
    req.team = membership;
    next();
  });

  // Overview -------------------------------------------------------------------------------------

  router.get('/teams/:team', async (req, res) => {
    const organizations = (await callApi<List<Organization>>(services, req, 'GET', teamApi(req, '/organizations'))).body.data;
    const withProjects = await mapLimit(organizations.slice(0, OVERVIEW_MAX_ORGANIZATIONS), CONCURRENCY, async (organization) => ({
      organization,
      projects: (await callApi<List<Project>>(services, req, 'GET', teamApi(req, `/organizations/${organization.id}/projects`))).body.data,
    }));
    let recentIssues: { issue: Issue; project: Project }[] | undefined;
    try {
      // Projects are listed oldest first: the newest are the likeliest to hold recent issues.
      const projects = withProjects.flatMap(({ organization, projects: list }) => list.map((project) => ({ organization, project })));
      const lists = await mapLimit(projects.slice(-OVERVIEW_MAX_PROJECTS_FOR_ISSUES), CONCURRENCY, async ({ organization, project }) => {
        const path = teamApi(req, `/organizations/${organization.id}/projects/${project.id}/issues`);
        const issues = (await callApi<List<Issue>>(services, req, 'GET', path)).body.data;
        return issues.map((issue) => ({ issue, project }));
      });
      recentIssues = lists
        .flat()
        .sort((a, b) => (a.issue.created_at === b.issue.created_at ? b.issue.id - a.issue.id : a.issue.created_at < b.issue.created_at ? 1 : -1))
        .slice(0, OVERVIEW_RECENT_ISSUES);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableError)) throw error;
      logger.warn({ err: error.reason, service: error.service }, 'recent issues unavailable');
    }
    const apiBase = `${req.protocol}://${req.host}`;
    sendPage(res, 200, overviewPage(pageContext(req, assets, 'overview'), { organizations: withProjects, recentIssues, apiBase }));
  });

  // API tokens -----------------------------------------------------------------------------------

  const tokensPath = (req: Request) => `/teams/${req.team!.team_id}/settings/tokens`;

  router.get('/teams/:team/settings/tokens', async (req, res) => {
    const tokens = await accounts.listTokens(req.team!.team_id);
    sendPage(res, 200, tokensPage(pageContext(req, assets, 'tokens'), { tokens, notice: noticeFrom(req.query.notice) }));
  });

  router.post('/teams/:team/settings/tokens', async (req, res) => {
    const teamId = req.team!.team_id;
    const name = formString(req.body, 'name').trim();
    const invalid = !name ? 'Enter a name for the token.' : name.length > 255 ? 'Use at most 255 characters.' : undefined;
    if (invalid) {
      const tokens = await accounts.listTokens(teamId);
      return sendPage(res, 422, tokensPage(pageContext(req, assets, 'tokens'), { tokens, name, errors: { name: [invalid] } }));
    }
    let created;
    try {
      created = await accounts.createToken(teamId, req.viewer!.userId, name);
    } catch (error) {
      // A bad name (422), or the team already holds as many tokens as its quota allows (409).
      const refusal = error instanceof AccountRequestError && (error.code === grpc.status.INVALID_ARGUMENT || error.code === grpc.status.RESOURCE_EXHAUSTED);
      if (!refusal) throw error;
      const tokens = await accounts.listTokens(teamId);
      const status = error.code === grpc.status.RESOURCE_EXHAUSTED ? 409 : 422;
      return sendPage(res, status, tokensPage(pageContext(req, assets, 'tokens'), { tokens, name, errors: { name: [error.message] } }));
    }
    const tokens = await accounts.listTokens(teamId);
    sendPage(res, 201, tokensPage(pageContext(req, assets, 'tokens'), { tokens, created }));
  });

  router.post('/teams/:team/settings/tokens/:token/delete', async (req, res) => {
    const teamId = req.team!.team_id;
    const tokenId = positiveId(req.params.token);
    if (formString(req.body, 'confirmed') !== 'yes') {
      const token = (await accounts.listTokens(teamId)).find((candidate) => candidate.id === tokenId);
      if (!token) throw pageNotFound();
      return sendPage(
        res,
        200,
        confirmPage(pageContext(req, assets, 'tokens'), {
          title: 'Delete API token',
          question: `Delete the token “${token.name}”?`,
          detail: 'Anything that uses this token will be refused by the API at once. This cannot be undone.',
          action: `${tokensPath(req)}/${tokenId}/delete`,
          button: 'Delete token',
          cancel: tokensPath(req),
        }),
      );
    }
    try {
      await accounts.revokeToken(teamId, tokenId);
    } catch (error) {
      if (error instanceof AccountRequestError && error.code === grpc.status.NOT_FOUND) throw pageNotFound();
      throw error;
    }
    res.redirect(303, `${tokensPath(req)}?notice=token-deleted`);
  });

  // Webhooks -------------------------------------------------------------------------------------

  const webhooksPath = (req: Request) => `/teams/${req.team!.team_id}/settings/webhooks`;

  router.get('/teams/:team/settings/webhooks', async (req, res) => {
    const webhooks = (await callApi<List<Webhook>>(services, req, 'GET', teamApi(req, '/webhooks'))).body.data;
    sendPage(res, 200, webhooksPage(pageContext(req, assets, 'webhooks'), { webhooks, notice: noticeFrom(req.query.notice) }));
  });

  const emptyWebhook: WebhookFormValues = { url: '', events: ['issue.created', 'issue.updated'], secret: '', active: true };

  router.get('/teams/:team/settings/webhooks/new', (req, res) => {
    sendPage(res, 200, newWebhookPage(pageContext(req, assets, 'webhooks'), { values: emptyWebhook }));
  });

  router.post('/teams/:team/settings/webhooks', async (req, res) => {
    const values: WebhookFormValues = {
      url: formString(req.body, 'url').trim(),
      events: formList(req.body, 'events'),
      secret: formString(req.body, 'secret'),
      active: formString(req.body, 'active') === 'true',
    };
    // Exactly what an API client would send; the webhook service applies its rules and messages.
    const body = { url: values.url, events: values.events, active: values.active, ...(values.secret ? { secret: values.secret } : {}) };
    const response = await callApi<Webhook & ApiErrorBody>(services, req, 'POST', teamApi(req, '/webhooks'), { body, accept: [422] });
    if (response.status === 422) {
      const errors = fieldErrors(response.body);
      const known = new Set(['url', 'events', 'secret', 'active']);
      const other = Object.entries(errors).filter(([name]) => !known.has(name));
      return sendPage(
        res,
        422,
        newWebhookPage(pageContext(req, assets, 'webhooks'), {
          values,
          errors,
          notice: { kind: 'error', text: other.length > 0 ? `The webhook was not added: ${other.map(([, messages]) => messages.join(' ')).join(' ')}` : 'The webhook was not added. Correct the fields marked below.' },
        }),
      );
    }
    res.redirect(303, `${webhooksPath(req)}/${response.body.id}?notice=webhook-created`);
  });

  const webhookId = (req: Request) => positiveId(req.params.webhook);

  async function renderWebhook(req: Request, res: Response, status: number, notice?: { kind: 'success' | 'error' | 'info'; text: string }) {
    const id = webhookId(req);
    const webhook = (await callApi<Webhook>(services, req, 'GET', teamApi(req, `/webhooks/${id}`))).body;
    let log: DeliveryLogEntry[] | undefined;
    let olderCursor: string | undefined;
    try {
      const cursor = typeof req.query.cursor === 'string' && /^[A-Za-z0-9_=-]{1,200}$/.test(req.query.cursor) ? req.query.cursor : undefined;
      const query = `?limit=${LOG_PAGE_SIZE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const list = (await callApi<List<Delivery>>(services, req, 'GET', teamApi(req, `/webhooks/${id}/deliveries${query}`))).body;
      olderCursor = list.next_cursor ?? undefined;
      log = await mapLimit(list.data.slice(0, LOG_PAGE_SIZE), CONCURRENCY, async (delivery) => {
        // Only the detail carries the attempts; a delivery with none needs no second call.
        if (delivery.attempt_count === 0) return { delivery, attempts: [] };
        try {
          const path = teamApi(req, `/deliveries/${encodeURIComponent(delivery.id)}`);
          const detail = (await callApi<DeliveryDetail>(services, req, 'GET', path)).body;
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
    sendPage(res, status, webhookPage(pageContext(req, assets, 'webhooks'), { webhook, log, olderCursor, notice: notice ?? noticeFrom(req.query.notice) }));
  }

  router.get('/teams/:team/settings/webhooks/:webhook', (req, res) => renderWebhook(req, res, 200));

  /** A refusal the person can read (409, 422...): the webhook page again, with the API's message. */
  const refusal = (body: ApiErrorBody | undefined, fallback: string) => ({ kind: 'error' as const, text: body?.message ? `${fallback} ${body.message}` : fallback });

  router.post('/teams/:team/settings/webhooks/:webhook/active', async (req, res) => {
    const id = webhookId(req);
    const active = formString(req.body, 'active') === 'true';
    const response = await callApi<ApiErrorBody>(services, req, 'PATCH', teamApi(req, `/webhooks/${id}`), { body: { active }, accept: [409, 422] });
    if (response.status >= 400) return renderWebhook(req, res, response.status, refusal(response.body, 'The webhook was not changed.'));
    const notice = active ? 'webhook-activated' : 'webhook-deactivated';
    const target = formString(req.body, 'return_to') === 'list' ? webhooksPath(req) : `${webhooksPath(req)}/${id}`;
    res.redirect(303, `${target}?notice=${notice}`);
  });

  router.post('/teams/:team/settings/webhooks/:webhook/delete', async (req, res) => {
    const id = webhookId(req);
    if (formString(req.body, 'confirmed') !== 'yes') {
      const webhook = (await callApi<Webhook>(services, req, 'GET', teamApi(req, `/webhooks/${id}`))).body;
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
    await callApi(services, req, 'DELETE', teamApi(req, `/webhooks/${id}`));
    res.redirect(303, `${webhooksPath(req)}?notice=webhook-deleted`);
  });

  router.post('/teams/:team/settings/webhooks/:webhook/ping', async (req, res) => {
    const id = webhookId(req);
    const response = await callApi<ApiErrorBody>(services, req, 'POST', teamApi(req, `/webhooks/${id}/ping`), { accept: [409, 422] });
    if (response.status >= 400) return renderWebhook(req, res, response.status, refusal(response.body, 'The ping was not sent.'));
    res.redirect(303, `${webhooksPath(req)}/${id}?notice=ping-sent`);
  });

  router.post('/teams/:team/settings/webhooks/:webhook/deliveries/:delivery/redeliver', async (req, res) => {
    const id = webhookId(req);
    const delivery = deliveryId(req.params.delivery);
    const path = teamApi(req, `/deliveries/${encodeURIComponent(delivery)}/redeliver`);
    const response = await callApi<ApiErrorBody>(services, req, 'POST', path, { accept: [409, 422] });
    if (response.status >= 400) return renderWebhook(req, res, response.status, refusal(response.body, 'The delivery was not sent again.'));
    res.redirect(303, `${webhooksPath(req)}/${id}?notice=redelivery-queued`);
  });
}
