import { claimTeamQuota, timestamp, withTransaction, type Pool, type Queryable } from '@worklane/db';

export interface ApiTokenRecord {
  id: number;
  team_id: number;
  user_id: number;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export interface TokenOwner {
  id: number;
  team_id: number;
  user_id: number;
  /** last_used_at is missing or over a minute old, so this use should be recorded. */
  last_used_is_stale: boolean;
}

/** How often last_used_at may be written per token. */
export const LAST_USED_RESOLUTION = "interval '60 seconds'";

const TOKEN_COLUMNS = `id, team_id, user_id, name, ${timestamp('created_at')}, ${timestamp('last_used_at')}`;

export class NotAMemberError extends Error {}

/** Stores a new token unless the team holds `maxTokens` already (TeamQuotaExceededError). */
export async function insertToken(pool: Pool, token: { teamId: number; userId: number; name: string; hash: string }, maxTokens: number): Promise<ApiTokenRecord> {
  try {
    return await withTransaction(pool, async (client) => {
      await claimTeamQuota(client, {
        resource: 'API tokens',
        teamId: token.teamId,
        limit: maxTokens,
        count: async (db) => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM api_tokens WHERE team_id = $1', [token.teamId])).rows[0]!.n),
      });
      const { rows } = await client.query<ApiTokenRecord>(`INSERT INTO api_tokens (team_id, user_id, name, token_hash) VALUES ($1, $2, $3, $4) RETURNING ${TOKEN_COLUMNS}`, [
        token.teamId,
        token.userId,
        token.name,
        token.hash,
      ]);
      return rows[0]!;
    });
  } catch (error) {
    // The (team, user) foreign key: the user left the team between the check and the insert.
    if ((error as { code?: string }).code === '23503') throw new NotAMemberError();
    throw error;
  }
}

/**
 * The token with this hash. Every call reads the table, so a token deleted by RevokeToken is
 * refused by the very next call on any replica. Named, so PostgreSQL plans it once per connection.
 */
export async function findTokenByHash(db: Queryable, hash: string): Promise<TokenOwner | undefined> {
  const { rows } = await db.query<TokenOwner>({
    name: 'token_by_hash',
    text: `SELECT id, team_id, user_id, (last_used_at IS NULL OR last_used_at < now() - ${LAST_USED_RESOLUTION}) AS last_used_is_stale
             FROM api_tokens WHERE token_hash = $1`,
    values: [hash],
  });
  return rows[0];
}

export interface LeasedTokenOwner {
  id: number;
  team_id: number;
  user_id: number;
}

/**
 * The token with this hash, leased to the caller for `leaseMs`: lease_until becomes at least
 * now() + leaseMs, in the same statement that finds the token. The UPDATE takes the row lock, so
 * it serializes with deleteToken: either it runs first and the delete sees (and waits out) the
 * lease, or it runs after and finds no row. A use is recorded at most once a minute, as by
 * touchToken. now() is the start of this statement, after the caller sent its request, so the
 * lease ends no earlier than the caller's cache entry.
 */
export async function leaseTokenByHash(db: Queryable, hash: string, leaseMs: number): Promise<LeasedTokenOwner | undefined> {
  const { rows } = await db.query<LeasedTokenOwner>({
    name: 'lease_token_by_hash',
    text: `UPDATE api_tokens
              SET lease_until = greatest(lease_until, now() + make_interval(secs => $2::double precision / 1000)),
                  last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < now() - ${LAST_USED_RESOLUTION} THEN now() ELSE last_used_at END
            WHERE token_hash = $1
        RETURNING id, team_id, user_id`,
    values: [hash, leaseMs],
  });
  return rows[0];
}

/** Records a use unless one was recorded within the last minute (by any replica). */
export async function touchToken(db: Queryable, id: number): Promise<void> {
  await db.query({
    name: 'touch_token',
    text: `UPDATE api_tokens SET last_used_at = now()
            WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - ${LAST_USED_RESOLUTION})`,
    values: [id],
  });
}

/** The team's tokens, newest first. */
export async function listTokens(db: Queryable, teamId: number): Promise<ApiTokenRecord[]> {
  const { rows } = await db.query<ApiTokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE team_id = $1 ORDER BY id DESC`, [teamId]);
  return rows;
}

export interface DeletedToken {
  /** Milliseconds until the last lease granted on the token runs out, by the database's clock; 0 when none is outstanding. */
  lease_remaining_ms: number;
  lease_until: string | null;
}

/**
 * Deletes the token if it belongs to the team; undefined when there was no such token. The
 * remaining lease is measured from this statement's start, which is no later than the moment the
 * row was deleted, so waiting it out from when this returns overshoots rather than falls short.
 */
export async function deleteToken(db: Queryable, teamId: number, tokenId: number): Promise<DeletedToken | undefined> {
  const { rows } = await db.query<DeletedToken>(
    `DELETE FROM api_tokens WHERE id = $1 AND team_id = $2
     RETURNING ceil(greatest(0, extract(epoch from lease_until - now()) * 1000))::float8 AS lease_remaining_ms,
               ${timestamp('lease_until')}`,
    [tokenId, teamId],
  );
  const deleted = rows[0];
  return deleted && { lease_until: deleted.lease_until, lease_remaining_ms: Number(deleted.lease_remaining_ms ?? 0) };
}

/** Milliseconds until `leaseUntil` (as deleteToken returned it) by the database's clock; 0 once it has passed. */
export async function leaseRemainingMs(db: Queryable, leaseUntil: string): Promise<number> {
  const { rows } = await db.query<{ remaining_ms: number }>(`SELECT ceil(greatest(0, extract(epoch from $1::timestamptz - now()) * 1000))::float8 AS remaining_ms`, [leaseUntil]);
  return Number(rows[0]!.remaining_ms);
}
