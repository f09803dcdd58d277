// The API tokens tab (/teams/:team/settings/tokens): list, create and delete the team's tokens.
import type { Request, Router } from 'express';
import { grpc } from '@worklane/grpc';
import { AccountRequestError } from '../clients/accounts';
import { formString, pageContext, pageNotFound, sendPage } from '../context';
import type { ConsoleDeps } from '../deps';
import { noticeFrom } from '../notices';
import { confirmPage } from '../views/pages';
import { tokensPage } from '../views/tokens';
import { positiveId } from './params';

export function mountTokens(router: Router, deps: ConsoleDeps): void {
  const { accounts, assets } = deps;

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
}
