import type { Queryable } from '@worklane/db';

export interface SessionRecord {
  user_id: number;
  csrf_token: string;
  expires_at: string;
}

export interface SessionLifetime {
  idleSeconds: number;
  absoluteSeconds: number;
}

/** When the session ends if nothing else happens: idle expiry, capped by the absolute one. */
const EXPIRES_AT = `to_char(least(last_seen_at + make_interval(secs => $2), absolute_expires_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS expires_at`;
const LIVE = `last_seen_at + make_interval(secs => $2) > now() AND absolute_expires_at > now()`;

export async function insertSession(db: Queryable, session: { secretHash: string; userId: number; csrfToken: string }, lifetime: SessionLifetime): Promise<SessionRecord> {
  const { rows } = await db.query<SessionRecord>(
    `INSERT INTO sessions (secret_hash, user_id, csrf_token, absolute_expires_at)
     VALUES ($1, $3, $4, now() + make_interval(secs => $5))
     RETURNING user_id, csrf_token, ${EXPIRES_AT}`,
    [session.secretHash, lifetime.idleSeconds, session.userId, session.csrfToken, lifetime.absoluteSeconds],
  );
  return rows[0]!;
}

/**
 * The live session with this secret hash, its idle timer restarted. The restart is written at
 * most once a minute per session, so a busy console does not write on every request.
 */
export async function findLiveSession(db: Queryable, secretHash: string, lifetime: SessionLifetime): Promise<SessionRecord | undefined> {
  const { rows } = await db.query<SessionRecord & { id: number; seen_long_ago: boolean }>(
    `SELECT id, user_id, csrf_token, ${EXPIRES_AT}, last_seen_at < now() - interval '60 seconds' AS seen_long_ago
       FROM sessions WHERE secret_hash = $1 AND ${LIVE}`,
    [secretHash, lifetime.idleSeconds],
  );
  const found = rows[0];
  if (!found) return undefined;
  if (!found.seen_long_ago) return { user_id: found.user_id, csrf_token: found.csrf_token, expires_at: found.expires_at };
  const touched = await db.query<SessionRecord>(
    `UPDATE sessions SET last_seen_at = now() WHERE id = $1 AND ${LIVE}
     RETURNING user_id, csrf_token, ${EXPIRES_AT}`,
    [found.id, lifetime.idleSeconds],
  );
  return touched.rows[0];
}

export async function deleteSession(db: Queryable, secretHash: string): Promise<void> {
  await db.query('DELETE FROM sessions WHERE secret_hash = $1', [secretHash]);
}

/** Drops a user's sessions that can no longer be used, so the table does not grow forever. */
export async function deleteExpiredSessions(db: Queryable, userId: number, lifetime: SessionLifetime): Promise<void> {
  await db.query(`DELETE FROM sessions WHERE user_id = $1 AND NOT (last_seen_at + make_interval(secs => $2) > now() AND absolute_expires_at > now())`, [
    userId,
    lifetime.idleSeconds,
  ]);
}
