import { setTimeout as sleep } from 'node:timers/promises';
import { z } from '@worklane/config';
import { TeamQuotaExceededError, type Pool } from '@worklane/db';
import { RpcError, grpc, type UnaryHandler } from '@worklane/grpc';
import type { Logger } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';
import { findMembership, findTeam, findUser } from '../data/accounts';
import { revocationWait } from '../data/token-changes';
import { NotAMemberError, deleteToken, findTokenByHash, insertToken, leaseRemainingMs, leaseTokenByHash, listTokens, touchToken, type ApiTokenRecord } from '../data/tokens';
import { generateToken, hashToken, isWellFormedToken } from '../domain/token-format';
import { displayName, id, parseRequest } from './validation';

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
  /** Longest lease Authenticate grants, in milliseconds; 0 grants none. */
  maxLeaseMs: number;
  /** API tokens one team may hold; CreateToken answers RESOURCE_EXHAUSTED beyond. */
  maxTokensPerTeam: number;
}

type Handlers = {
  Authenticate: UnaryHandler<tokenV1.AuthenticateRequest__Output, tokenV1.Identity>;
  CreateToken: UnaryHandler<tokenV1.CreateTokenRequest__Output, tokenV1.CreateTokenResponse>;
  ListTokens: UnaryHandler<tokenV1.ListTokensRequest__Output, tokenV1.ListTokensResponse>;
  RevokeToken: UnaryHandler<tokenV1.RevokeTokenRequest__Output, tokenV1.RevokeTokenResponse>;
};

export function tokenServiceHandlers({ pool, logger, maxLeaseMs, maxTokensPerTeam }: TokenServiceDeps): Handlers {
  // Tokens whose last_used_at write is under way here, so a burst of requests writes it once.
  const touching = new Set<number>();

  function recordUse(tokenId: number): void {
    if (touching.has(tokenId)) return;
    touching.add(tokenId);
    touchToken(pool, tokenId)
      .catch((error: unknown) => logger.warn({ err: error, tokenId }, 'could not record token use'))
      .finally(() => touching.delete(tokenId));
  }

  /**
   * Returns once the database's now() has passed leaseUntil. Sleeps the remaining time the delete
   * measured, then asks the database again, in case this process's timers ran fast.
   */
  async function waitOutLease(leaseUntil: string | null, remainingMs: number): Promise<void> {
    if (leaseUntil === null) return;
    let remaining = remainingMs;
    while (remaining > 0) {
      await sleep(remaining);
      try {
        remaining = await leaseRemainingMs(pool, leaseUntil);
      } catch (error) {
        // The sleep above already covered the lease as measured; the check is belt and braces.
        logger.warn({ err: error }, 'could not re-check a revoked token’s lease; relying on the measured wait');
        return;
      }
    }
  }

  async function requireTeam(teamId: number) {
    if (!(await findTeam(pool, teamId))) throw RpcError.notFound(`team ${teamId} not found`);
  }

  return {
    async Authenticate(request) {
      const value = typeof request.token === 'string' ? request.token : '';
      // Malformed values (wrong shape or checksum) are refused without touching the database.
      if (value.length > MAX_TOKEN_LENGTH || !isWellFormedToken(value)) throw RpcError.unauthenticated('invalid token');
      const requested = typeof request.cache_ttl_ms === 'number' ? request.cache_ttl_ms : 0;
      const leaseMs = Math.min(requested, maxLeaseMs);
      if (leaseMs > 0) {
        // Leased: the caller may cache this answer for leaseMs, and RevokeToken waits the lease out.
        const leased = await leaseTokenByHash(pool, hashToken(value), leaseMs);
        if (!leased) throw RpcError.unauthenticated('invalid token');
        return { token_id: leased.id, team_id: leased.team_id, user_id: leased.user_id, cache_ttl_ms: leaseMs };
      }
      const token = await findTokenByHash(pool, hashToken(value));
      if (!token) throw RpcError.unauthenticated('invalid token');
      // Not awaited: the answer does not wait for the bookkeeping write. A caller that follows the
      // token change feed reports its uses there, in batches.
      if (token.last_used_is_stale && request.caller_reports_use !== true) recordUse(token.id);
      return { token_id: token.id, team_id: token.team_id, user_id: token.user_id, cache_ttl_ms: 0 };
    },

    async CreateToken(request) {
      const { team_id, user_id, name } = parseRequest(createTokenRequest, request);
      await requireTeam(team_id);
      if (!(await findUser(pool, user_id))) throw RpcError.notFound(`user ${user_id} not found`);
      const notMember = new RpcError(grpc.status.FAILED_PRECONDITION, `user ${user_id} is not a member of team ${team_id}`);
      if (!(await findMembership(pool, team_id, user_id))) throw notMember;
      const value = generateToken();
      try {
        const token = await insertToken(pool, { teamId: team_id, userId: user_id, name, hash: hashToken(value) }, maxTokensPerTeam);
        return { token: toApiToken(token), value };
      } catch (error) {
        if (error instanceof NotAMemberError) throw notMember;
        // The message names the limit: "The team has reached its limit of 100 API tokens."
        if (error instanceof TeamQuotaExceededError) throw new RpcError(grpc.status.RESOURCE_EXHAUSTED, error.message);
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
      const deleted = await deleteToken(pool, team_id, token_id);
      if (!deleted) throw RpcError.notFound(`token ${token_id} not found in team ${team_id}`);
      // ...and no gateway still accepts it from its cache: answer only once the last lease granted
      // on it, and the token change feed's lease, have run out by the database's clock (the clock
      // that measured them). A gateway that read the feed after the delete dropped the token; one
      // that read it before relies on a lease this waits out.
      const wait = await revocationWait(pool, deleted.lease_until);
      await waitOutLease(wait.leaseUntil, wait.remainingMs);
      return {};
    },
  };
}
