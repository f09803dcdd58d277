import { timestamp, type Queryable } from '@worklane/db';

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

export async function insertToken(
  db: Queryable,
  token: { teamId: number; userId: number; name: string; hash: string },
): Promise<ApiTokenRecord> {
  try {
    const { rows } = await db.query<ApiTokenRecord>(
      `INSERT INTO api_tokens (team_id, user_id, name, token_hash) VALUES ($1, $2, $3, $4) RETURNING ${TOKEN_COLUMNS}`,
      [token.teamId, token.userId, token.name, token.hash],
    );
    return rows[0]!;
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

/** Deletes the token if it belongs to the team; false when there was no such token. */
export async function deleteToken(db: Queryable, teamId: number, tokenId: number): Promise<boolean> {
  const result = await db.query('DELETE FROM api_tokens WHERE id = $1 AND team_id = $2', [tokenId, teamId]);
  return (result.rowCount ?? 0) > 0;
}
