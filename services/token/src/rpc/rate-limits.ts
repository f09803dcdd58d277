import { z } from '@worklane/config';
import type { Queryable } from '@worklane/db';
import type { UnaryHandler } from '@worklane/grpc';
import type { tokenV1 } from '@worklane/proto';
import { syncBuckets, type BucketScope, type BucketUsage } from '../data/rate-limit-buckets';
import { id, parseRequest } from './validation';

/** Keys one SyncRateLimits call may carry (the proto's contract); the gateway sends fewer per call. */
export const MAX_SYNC_KEYS = 10_000;

const SCOPES: Record<string, BucketScope> = { RATE_LIMIT_SCOPE_TOKEN: 'token', RATE_LIMIT_SCOPE_TEAM: 'team' };
const PROTO_SCOPES: Record<BucketScope, tokenV1.RateLimitScope__Output> = { token: 'RATE_LIMIT_SCOPE_TOKEN', team: 'RATE_LIMIT_SCOPE_TEAM' };

const usage = z.object({
  scope: z.enum(Object.keys(SCOPES) as [string, ...string[]], { error: 'must be RATE_LIMIT_SCOPE_TOKEN or RATE_LIMIT_SCOPE_TEAM' }),
  id: id(),
  spent: z.number().int().min(0),
  per_second: z.number().positive('must be positive').max(1_000_000_000, 'must be at most 1e9'),
  burst: z.number().int().min(1, 'must be at least 1'),
});
const syncRequest = z.object({ usage: z.array(usage).max(MAX_SYNC_KEYS, `must hold at most ${MAX_SYNC_KEYS} keys`) });

/** The same key twice in one call (which the gateway never sends) counts as one, its spending added. */
function mergeDuplicates(entries: BucketUsage[]): BucketUsage[] {
  const byKey = new Map<string, BucketUsage>();
  for (const entry of entries) {
    const key = `${entry.scope}:${entry.id}`;
    const seen = byKey.get(key);
    if (seen) seen.spent += entry.spent;
    else byKey.set(key, { ...entry });
  }
  return [...byKey.values()];
}

/**
 * SyncRateLimits: the gateway replicas' shared API rate limits. Each call adds what one replica's
 * keys spent since its previous call to the keys' shared buckets (rate_limit_buckets) and answers
 * their levels; the replica decides its requests from them until its next call.
 */
export function syncRateLimitsHandler(db: Queryable): UnaryHandler<tokenV1.SyncRateLimitsRequest__Output, tokenV1.SyncRateLimitsResponse> {
  return async (request) => {
    const parsed = parseRequest(syncRequest, request);
    const entries = mergeDuplicates(
      parsed.usage.map((entry) => ({ scope: SCOPES[entry.scope]!, id: entry.id, spent: entry.spent, perSecond: entry.per_second, burst: entry.burst })),
    );
    const levels = await syncBuckets(db, entries);
    return { levels: levels.map((level) => ({ scope: PROTO_SCOPES[level.scope], id: level.id, level: level.level })) };
  };
}
