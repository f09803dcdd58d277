import { RpcError, grpc, type UnaryHandler } from '@worklane/grpc';
import type { Logger } from '@worklane/observability';
import type { Pool } from '@worklane/db';
import type { tokenV1 } from '@worklane/proto';
import { findMembership, findTeam, findUser } from '../data/accounts';
import { NotAMemberError, deleteToken, findTokenByHash, insertToken, listTokens, touchToken, type ApiTokenRecord } from '../data/tokens';
import { generateToken, hashToken, isWellFormedToken } from '../domain/token-format';
import { displayName, id, parseRequest } from './validation';
import { z } from '@worklane/config';

/** Longest Authorization value worth hashing; anything longer cannot be a token. */
const MAX_TOKEN_LENGTH = 256;

const createTokenRequest = z.object({ team_id: id(), user_id: id(), name: displayName() });
const listTokensRequest = z.object({ team_id: id() });
const revokeTokenRequest = z.object({ team_id: id(), token_id: id() });

const toApiToken = (token: ApiTokenRecord): tokenV1.ApiToken => ({
  id: token.id,
  team_id: token.team_id,
  user_id: token.user_id,
  name: token.name,
  created_at: token.created_at,
  last_used_at: token.last_used_at ?? '',
});

export interface TokenServiceDeps {
  pool: Pool;
  logger: Logger;
}

type Handlers = {
  Authenticate: UnaryHandler<tokenV1.AuthenticateRequest__Output, tokenV1.Identity>;
  CreateToken: UnaryHandler<tokenV1.CreateTokenRequest__Output, tokenV1.CreateTokenResponse>;
  ListTokens: UnaryHandler<tokenV1.ListTokensRequest__Output, tokenV1.ListTokensResponse>;
  RevokeToken: UnaryHandler<tokenV1.RevokeTokenRequest__Output, tokenV1.RevokeTokenResponse>;
};

export function tokenServiceHandlers({ pool, logger }: TokenServiceDeps): Handlers {
  // Tokens whose last_used_at write is under way here, so a burst of requests writes it once.
  const touching = new Set<number>();

  function recordUse(tokenId: number): void {
    if (touching.has(tokenId)) return;
    touching.add(tokenId);
    touchToken(pool, tokenId)
      .catch((error: unknown) => logger.warn({ err: error, tokenId }, 'could not record token use'))
      .finally(() => touching.delete(tokenId));
  }

  async function requireTeam(teamId: number) {
    if (!(await findTeam(pool, teamId))) throw RpcError.notFound(`team ${teamId} not found`);
  }

  return {
    async Authenticate(request) {
      const value = typeof request.token === 'string' ? request.token : '';
      // Malformed values (wrong shape or checksum) are refused without touching the database.
      if (value.length > MAX_TOKEN_LENGTH || !isWellFormedToken(value)) throw RpcError.unauthenticated('invalid token');
      const token = await findTokenByHash(pool, hashToken(value));
      if (!token) throw RpcError.unauthenticated('invalid token');
      // Not awaited: the answer does not wait for the bookkeeping write.
      if (token.last_used_is_stale) recordUse(token.id);
      return { token_id: token.id, team_id: token.team_id, user_id: token.user_id };
    },

    async CreateToken(request) {
      const { team_id, user_id, name } = parseRequest(createTokenRequest, request);
      await requireTeam(team_id);
      if (!(await findUser(pool, user_id))) throw RpcError.notFound(`user ${user_id} not found`);
      const notMember = new RpcError(grpc.status.FAILED_PRECONDITION, `user ${user_id} is not a member of team ${team_id}`);
      if (!(await findMembership(pool, team_id, user_id))) throw notMember;
      const value = generateToken();
      try {
        const token = await insertToken(pool, { teamId: team_id, userId: user_id, name, hash: hashToken(value) });
        return { token: toApiToken(token), value };
      } catch (error) {
        if (error instanceof NotAMemberError) throw notMember;
        throw error;
      }
    },

    async ListTokens(request) {
      const { team_id } = parseRequest(listTokensRequest, request);
      await requireTeam(team_id);
      return { tokens: (await listTokens(pool, team_id)).map(toApiToken) };
    },

    async RevokeToken(request) {
      const { team_id, token_id } = parseRequest(revokeTokenRequest, request);
      // Deleted, not flagged: once this returns, no replica can find the token any more.
      if (!(await deleteToken(pool, team_id, token_id))) throw RpcError.notFound(`token ${token_id} not found in team ${team_id}`);
      return {};
    },
  };
}
