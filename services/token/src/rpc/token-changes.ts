import { z } from '@worklane/config';
import type { Queryable } from '@worklane/db';
import type { UnaryHandler } from '@worklane/grpc';
import type { Logger } from '@worklane/observability';
import type { tokenV1 } from '@worklane/proto';
import { extendFeedLease, readTokenChanges, renewTokens, touchTokens } from '../data/token-changes';
import { id, parseRequest } from './validation';

/** Used tokens one call may report, and cached acceptances it may renew (the proto's contract). */
export const MAX_USED_TOKENS = 10_000;
export const MAX_RENEWALS = 10_000;
/** Changes one answer lists at most; `more` says when others wait. */
export const CHANGES_PER_PAGE = 5_000;

const request = z.object({
  cursor: z.number().int('must be an integer').min(0, 'must not be negative'),
  used_token_ids: z.array(id()).max(MAX_USED_TOKENS, `must hold at most ${MAX_USED_TOKENS} ids`),
  renew: z
    .array(z.object({ token_id: id(), token_sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lower-case hex SHA-256') }))
    .max(MAX_RENEWALS, `must hold at most ${MAX_RENEWALS} tokens`),
});

export interface TokenChangesDeps {
  db: Queryable;
  logger: Logger;
  /** The feed's lease (TOKEN_CHANGES_LEASE_MS); 0 grants none. */
  leaseMs: number;
}

/**
 * ListTokenChanges: a page of the token change feed and the lease the caller may rely on, and
 * which of the cached acceptances the caller asks to renew still hold. Renewals are read before
 * the page, so a token changed after its renewal was read is in this page or a later one. The
 * lease is extended only when less than three quarters of it are left, so the readers of every
 * gateway replica together write it about four times a second at most (a reader that is a few
 * hundred milliseconds late still finds its cache trusted); an answer's lease is read in the same
 * snapshot as its changes, after any extension committed.
 */
export function listTokenChangesHandler({ db, logger, leaseMs }: TokenChangesDeps): UnaryHandler<tokenV1.ListTokenChangesRequest__Output, tokenV1.ListTokenChangesResponse> {
  return async (call) => {
    const { cursor, used_token_ids, renew } = parseRequest(request, call);
    if (used_token_ids.length > 0) {
      // Bookkeeping only: a failure here must not stop the feed that revocation relies on.
      touchTokens(db, used_token_ids).catch((error: unknown) => logger.warn({ err: error, tokens: used_token_ids.length }, 'could not record token use'));
    }
    const renewed = await renewTokens(
      db,
      renew.map((renewal) => ({ id: renewal.token_id, hash: renewal.token_sha256 })),
    );
    let page = await readTokenChanges(db, cursor, CHANGES_PER_PAGE);
    if (leaseMs > 0 && page.leaseRemainingMs < (leaseMs * 3) / 4) {
      await extendFeedLease(db, leaseMs);
      page = await readTokenChanges(db, cursor, CHANGES_PER_PAGE);
    }
    return {
      token_ids: page.tokenIds,
      cursor: page.cursor,
      more: page.more,
      reset: page.reset,
      cache_valid_ms: leaseMs > 0 ? Math.min(leaseMs, page.leaseRemainingMs) : 0,
      renewed: renewed.map((token) => ({ token_id: token.id, team_id: token.team_id, user_id: token.user_id, cache_ttl_ms: 0 })),
      renew_answered: true,
    };
  };
}
