import { withTransaction, type Pool } from '@worklane/db';

/** The limits of one sign-in attempt, as the console configures them. */
export interface SignInLimits {
  windowSeconds: number;
  maxPerAccount: number;
  maxPerAddress: number;
}

export type SignInAttempt = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Rows older than this are removed whatever their window (windows are at most a day). */
const FORGET_AFTER = `interval '1 day'`;

const accountBucket = (email: string) => `account:${email}`;
const addressBucket = (address: string) => `address:${address}`;

class Refused extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('sign-in attempt refused');
  }
}

/**
 * Counts one attempt for the account (its normalised email) and for the client address, or
 * refuses it when either is already at its limit within its window. Check and count are one
 * transaction: the UPSERT locks both rows (account first, then address, in every transaction,
 * so two attempts cannot deadlock), and a refused attempt rolls its counts back, so it costs
 * nothing. N concurrent attempts against a limit of M: exactly min(N, M) go ahead.
 */
export async function takeSignInAttempt(pool: Pool, email: string, address: string, limits: SignInLimits): Promise<SignInAttempt> {
  try {
    await withTransaction(pool, async (client) => {
      const { rows } = await client.query<{ bucket: string; attempts: number; retry_after_seconds: number }>(
        `INSERT INTO sign_in_attempts AS a (bucket, window_start, attempts)
         VALUES ($1, now(), 1), ($2, now(), 1)
         ON CONFLICT (bucket) DO UPDATE SET
           window_start = CASE WHEN a.window_start <= now() - make_interval(secs => $3) THEN now() ELSE a.window_start END,
           attempts = CASE WHEN a.window_start <= now() - make_interval(secs => $3) THEN 1 ELSE a.attempts + 1 END
         RETURNING bucket, attempts,
           greatest(1, ceil(extract(epoch FROM a.window_start + make_interval(secs => $3) - now())))::int AS retry_after_seconds`,
        [accountBucket(email), addressBucket(address), limits.windowSeconds],
      );
      let wait = 0;
      for (const row of rows) {
        const max = row.bucket.startsWith('account:') ? limits.maxPerAccount : limits.maxPerAddress;
        if (row.attempts > max) wait = Math.max(wait, row.retry_after_seconds);
      }
      if (wait > 0) throw new Refused(wait);
    });
  } catch (error) {
    if (error instanceof Refused) return { allowed: false, retryAfterSeconds: error.retryAfterSeconds };
    throw error;
  }
  return { allowed: true };
}

/**
 * After a correct password: the account starts afresh, and the address gets back the slot this
 * attempt took (only failures count against an address).
 */
export async function signInSucceeded(pool: Pool, email: string, address: string): Promise<void> {
  await pool.query(
    `WITH cleared AS (DELETE FROM sign_in_attempts WHERE bucket = $1)
     UPDATE sign_in_attempts SET attempts = attempts - 1 WHERE bucket = $2 AND attempts > 0`,
    [accountBucket(email), addressBucket(address)],
  );
}

/** Forgets buckets whose window ended long ago; a bounded batch per call. */
export async function forgetOldSignInAttempts(pool: Pool, batch = 1_000): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM sign_in_attempts WHERE bucket IN (
       SELECT bucket FROM sign_in_attempts WHERE window_start < now() - ${FORGET_AFTER} LIMIT $1)`,
    [batch],
  );
  return rowCount ?? 0;
}
