import type { Queryable } from '@worklane/db';
import { LAST_USED_RESOLUTION } from './tokens';

/**
 * The token change feed (migration 007): triggers on api_tokens number every deletion and every
 * change of a token's team, user or value, in commit order. A reader keeps a cursor, the next seq
 * it has not read; 0 means it has read nothing yet.
 */
export interface TokenChangesPage {
  /** Tokens changed since the cursor, oldest first (a token may appear more than once). */
  tokenIds: number[];
  /** The cursor to ask with next time. */
  cursor: number;
  /** More changes wait after `cursor`. */
  more: boolean;
  /** The cursor was older than the changes kept, or newer than the feed: the reader must forget everything it knows. */
  reset: boolean;
  /** Milliseconds the feed's lease has left by the database's clock. */
  leaseRemainingMs: number;
}

interface FeedRow {
  lease_ms: number;
  pruned_through: string;
  last_seq: string | null;
  seqs: string[];
  token_ids: string[];
}

/**
 * One page of changes from `cursor` on, at most `limit`, read together with the feed's lease and
 * retention mark in one snapshot: whatever committed before that snapshot is either in this page
 * (or the pages after it) or was already read.
 */
export async function readTokenChanges(db: Queryable, cursor: number, limit: number): Promise<TokenChangesPage> {
  const { rows } = await db.query<FeedRow>({
    name: 'token_changes_page',
    text: `WITH page AS (
             SELECT seq, token_id FROM api_token_changes WHERE $1::bigint > 0 AND seq >= $1::bigint ORDER BY seq LIMIT $2::int + 1
           )
           SELECT ceil(greatest(0, extract(epoch from f.lease_until - now()) * 1000))::float8 AS lease_ms,
                  f.pruned_through,
                  (SELECT max(seq) FROM api_token_changes) AS last_seq,
                  ARRAY(SELECT seq FROM page ORDER BY seq) AS seqs,
                  ARRAY(SELECT token_id FROM page ORDER BY seq) AS token_ids
             FROM api_token_feed f`,
    values: [cursor, limit],
  });
  const row = rows[0]!;
  const prunedThrough = Number(row.pruned_through);
  const leaseRemainingMs = Number(row.lease_ms);
  const head = Math.max(Number(row.last_seq ?? 0), prunedThrough) + 1;
  // A new reader starts at the head; one whose cursor the retention passed starts there again.
  if (cursor === 0) return { tokenIds: [], cursor: head, more: false, reset: false, leaseRemainingMs };
  // A cursor past the head was given by a feed that is gone (the database restored or recreated):
  // its changes since cannot be told apart either.
  if (cursor <= prunedThrough || cursor > head) return { tokenIds: [], cursor: head, more: false, reset: true, leaseRemainingMs };
  const more = row.seqs.length > limit;
  const seqs = row.seqs.slice(0, limit).map(Number);
  return {
    tokenIds: row.token_ids.slice(0, limit).map(Number),
    cursor: seqs.length > 0 ? seqs[seqs.length - 1]! + 1 : cursor,
    more,
    reset: false,
    leaseRemainingMs,
  };
}

/**
 * Extends the feed's lease to `leaseMs` from now (never shortens it). A statement of its own,
 * committed before the page that relies on it is read: a revocation that commits after that read
 * then finds the lease, and one that commits before is in the page.
 */
export async function extendFeedLease(db: Queryable, leaseMs: number): Promise<void> {
  await db.query({
    name: 'token_feed_extend',
    text: `UPDATE api_token_feed SET lease_until = now() + make_interval(secs => $1::double precision / 1000)
            WHERE lease_until < now() + make_interval(secs => $1::double precision / 1000)`,
    values: [leaseMs],
  });
}

/**
 * The later of `tokenLeaseUntil` (the token's own lease, as deleteToken returned it) and the
 * feed's lease, and the milliseconds left until then by the database's clock. Read after the
 * revocation committed, never in the same statement: a feed read that missed the revocation
 * extended the lease before it read.
 */
export async function revocationWait(db: Queryable, tokenLeaseUntil: string | null): Promise<{ leaseUntil: string; remainingMs: number }> {
  const { rows } = await db.query<{ lease_until: string; remaining_ms: number }>({
    name: 'token_revocation_wait',
    text: `SELECT greatest(f.lease_until, $1::timestamptz)::text AS lease_until,
                  ceil(greatest(0, extract(epoch from greatest(f.lease_until, $1::timestamptz) - now()) * 1000))::float8 AS remaining_ms
             FROM api_token_feed f`,
    values: [tokenLeaseUntil],
  });
  const row = rows[0]!;
  return { leaseUntil: row.lease_until, remainingMs: Number(row.remaining_ms) };
}

/** A cached acceptance to check again: the token's id and the stored form of its value (hashToken). */
export interface TokenRenewal {
  id: number;
  hash: string;
}

export interface RenewedToken {
  id: number;
  team_id: number;
  user_id: number;
}

/**
 * The tokens of `renewals` that still exist with that value, with their team and user: one
 * read-only statement for a whole batch of cached acceptances, where Authenticate would take one
 * call and one lookup each.
 */
export async function renewTokens(db: Queryable, renewals: readonly TokenRenewal[]): Promise<RenewedToken[]> {
  if (renewals.length === 0) return [];
  const { rows } = await db.query<RenewedToken>({
    name: 'token_renewals',
    text: `SELECT t.id, t.team_id, t.user_id
             FROM unnest($1::bigint[], $2::text[]) AS r(id, token_hash)
             JOIN api_tokens t ON t.id = r.id AND t.token_hash = r.token_hash`,
    values: [renewals.map((renewal) => renewal.id), renewals.map((renewal) => renewal.hash)],
  });
  return rows.map((row) => ({ id: Number(row.id), team_id: Number(row.team_id), user_id: Number(row.user_id) }));
}

/**
 * Records that the tokens were used, at most once a minute each (as touchToken): the gateways
 * report the tokens they accepted from their caches in batches.
 */
export async function touchTokens(db: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query({
    name: 'touch_tokens',
    text: `UPDATE api_tokens SET last_used_at = now()
            WHERE id = ANY($1::bigint[]) AND (last_used_at IS NULL OR last_used_at < now() - ${LAST_USED_RESOLUTION})`,
    values: [ids],
  });
}

/**
 * Deletes changes older than `retentionSeconds` and raises the retention mark to the highest seq
 * deleted; resolves to how many it deleted.
 */
export async function pruneTokenChanges(db: Queryable, retentionSeconds: number): Promise<number> {
  const { rows } = await db.query<{ removed: string }>({
    name: 'token_changes_prune',
    text: `WITH gone AS (
             DELETE FROM api_token_changes WHERE changed_at < now() - make_interval(secs => $1::double precision) RETURNING seq
           ), marked AS (
             UPDATE api_token_feed SET pruned_through = greatest(pruned_through, (SELECT max(seq) FROM gone))
              WHERE EXISTS (SELECT 1 FROM gone)
           )
           SELECT count(*) AS removed FROM gone`,
    values: [retentionSeconds],
  });
  return Number(rows[0]!.removed);
}
