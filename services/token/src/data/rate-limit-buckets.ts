import type { Queryable } from '@worklane/db';

/** What a bucket counts, as stored in rate_limit_buckets.scope (the proto's RateLimitScope numbers). */
export const BUCKET_SCOPES = { token: 1, team: 2 } as const;
export type BucketScope = keyof typeof BUCKET_SCOPES;

/** One key's spending on one gateway replica since its previous sync, and the allowance it runs. */
export interface BucketUsage {
  scope: BucketScope;
  id: number;
  spent: number;
  perSecond: number;
  burst: number;
}

export interface BucketLevel {
  scope: BucketScope;
  id: number;
  /** Units left in the shared bucket, after this sync's spending; -burst at the lowest. */
  level: number;
}

const scopeOf = (stored: number): BucketScope => (stored === BUCKET_SCOPES.team ? 'team' : 'token');

/**
 * Adds each key's spending to its shared bucket and answers the levels, in one statement for the
 * whole batch: a new key starts full, an existing one first refills for the time since its last
 * sync (at the rate and up to the burst the caller sent), then the spending is taken from it. The
 * level never goes below -burst: what a key overspent while the replicas could not sync is paid
 * back with at most one burst's wait, never more. Spending beyond two bursts changes nothing then,
 * which is why it is capped before it is stored.
 *
 * Keys must be unique in `usage`; they are locked in (scope, key) order, so batches of several
 * replicas touching the same keys cannot deadlock. Concurrent syncs of one key are serialized by
 * the row lock, and a sync whose transaction started earlier than the row's last write does not
 * move the clock back.
 */
export async function syncBuckets(db: Queryable, usage: readonly BucketUsage[]): Promise<BucketLevel[]> {
  if (usage.length === 0) return [];
  const { rows } = await db.query<{ scope: number; key: string | number; level: number }>({
    name: 'rate-limit-buckets-sync',
    text: `INSERT INTO rate_limit_buckets AS b (scope, key, per_second, burst, level, updated_at)
       SELECT u.scope, u.key, u.per_second, u.burst, u.burst - LEAST(u.spent, 2 * u.burst), now()
       FROM unnest($1::smallint[], $2::bigint[], $3::float8[], $4::float8[], $5::float8[]) AS u(scope, key, spent, per_second, burst)
       ORDER BY u.scope, u.key
       ON CONFLICT (scope, key) DO UPDATE SET
         per_second = EXCLUDED.per_second,
         burst = EXCLUDED.burst,
         -- EXCLUDED.burst - EXCLUDED.level is this sync's (capped) spending.
         level = GREATEST(
           -EXCLUDED.burst,
           LEAST(EXCLUDED.burst, b.level + GREATEST(0, EXTRACT(EPOCH FROM EXCLUDED.updated_at - b.updated_at)::float8) * EXCLUDED.per_second)
             - (EXCLUDED.burst - EXCLUDED.level)
         ),
         updated_at = GREATEST(b.updated_at, EXCLUDED.updated_at)
       RETURNING scope, key, level`,
    values: [usage.map((u) => BUCKET_SCOPES[u.scope]), usage.map((u) => u.id), usage.map((u) => u.spent), usage.map((u) => u.perSecond), usage.map((u) => u.burst)],
  });
  return rows.map((row) => ({ scope: scopeOf(row.scope), id: Number(row.key), level: row.level }));
}

/**
 * Deletes the buckets that have refilled since their last sync (a full bucket and no bucket mean
 * the same), skipping rows a sync holds at this moment; resolves to how many it removed.
 */
export async function deleteFullBuckets(db: Queryable): Promise<number> {
  const { rowCount } = await db.query({
    name: 'rate-limit-buckets-delete-full',
    text: `WITH full_again AS (
         SELECT scope, key FROM rate_limit_buckets
         WHERE level + EXTRACT(EPOCH FROM now() - updated_at)::float8 * per_second >= burst
         FOR UPDATE SKIP LOCKED
       )
       DELETE FROM rate_limit_buckets b USING full_again f WHERE b.scope = f.scope AND b.key = f.key`,
  });
  return rowCount ?? 0;
}
