import { randomUUID } from 'node:crypto';
import { BackgroundWorker, type Logger, type Registry } from '@worklane/observability';

/**
 * The record of POSTs made with an `Idempotency-Key` (the `idempotency_keys` table each service
 * with such POSTs creates in its migrations). A key is taken by the first request that uses it
 * (a lease), and completed with that request's answer in the transaction of its work, so that the
 * work and the record of its answer commit together or not at all. docs/api-idempotency.md.
 */

/** Whose key it is: keys of different teams, or of different operations, never meet. */
export interface IdempotencyScope {
  teamId: number;
  /** The operation: method and route template (`POST /api/v1/teams/:team/webhooks`). */
  operation: string;
  key: string;
}

/** What makes two requests with one key the same request. */
export interface IdempotentRequest {
  /** SHA-256 of the method, the path and the canonical JSON of the body. */
  fingerprint: Buffer;
  path: string;
}

/** An answer as it is kept and replayed. */
export interface StoredResponse {
  status: number;
  /** Headers to replay besides the content type (`location`). */
  headers: Record<string, string>;
  /** The JSON body as it was sent. */
  body: string;
}

export type Reservation =
  /** The key is this request's until it completes or releases it, or its lease runs out. */
  | { outcome: 'reserved'; leaseToken: string }
  /** A request with this key and the same fingerprint has been answered: answer the same. */
  | { outcome: 'replay'; response: StoredResponse }
  /** A request with this key and the same fingerprint is running now. */
  | { outcome: 'in-progress' }
  /** The key was used with another path or body. */
  | { outcome: 'mismatch'; samePath: boolean };

export interface IdempotencyKeyOptions {
  /** How long an answer is kept for replay, from the first request. */
  ttlMs: number;
  /** How long a request holds its key while it runs; after it, a retry may take the key over. */
  leaseMs: number;
}

/**
 * What runs the store's SQL: a pg pool, or a client inside a transaction (structurally, so that
 * the HTTP layer does not load the database driver).
 */
export interface SqlClient {
  // Rows are typed by each query's caller, as pg's own QueryResult does by default.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query(query: { name?: string; text: string; values?: unknown[] }): Promise<{ rows: any[]; rowCount: number | null }>;
}

interface ReserveRow {
  claimed: number;
  same_request: boolean | null;
  same_path: boolean | null;
  completed: boolean | null;
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: string | null;
}

// One statement: take the key when it is new, expired, or held by a request of the same
// fingerprint whose lease ran out (it crashed); otherwise read what holds it. The read sees the
// statement's snapshot: a row committed by a concurrent insert while this one waited is not in it,
// and the statement is simply run again.
const RESERVE = `WITH claimed AS (
   INSERT INTO idempotency_keys AS k (team_id, operation, key, fingerprint, path, lease_token, locked_until, expires_at)
   VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7), now() + make_interval(secs => $8))
   ON CONFLICT (team_id, operation, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, path = EXCLUDED.path, lease_token = EXCLUDED.lease_token,
          locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at, created_at = now(),
          response_status = NULL, response_headers = NULL, response_body = NULL, completed_at = NULL
    WHERE k.expires_at <= now()
       OR (k.completed_at IS NULL AND k.locked_until <= now() AND k.fingerprint = EXCLUDED.fingerprint)
   RETURNING 1
 )
 SELECT (SELECT count(*) FROM claimed)::int AS claimed,
        k.fingerprint = $4 AS same_request, k.path = $5 AS same_path, k.completed_at IS NOT NULL AS completed,
        k.response_status, k.response_headers, k.response_body
   FROM (SELECT 1) AS one
   LEFT JOIN idempotency_keys k ON k.team_id = $1 AND k.operation = $2 AND k.key = $3`;

export class IdempotencyKeys {
  constructor(
    private readonly pool: SqlClient,
    private readonly options: IdempotencyKeyOptions,
  ) {}

  /** Takes `scope`'s key for `request`, or says why not. Commits at once, so that other requests see it. */
  async reserve(scope: IdempotencyScope, request: IdempotentRequest): Promise<Reservation> {
    const leaseToken = randomUUID();
    for (let attempt = 0; ; attempt++) {
      const { rows } = await this.pool.query({
        name: 'idempotency-key-reserve',
        text: RESERVE,
        values: [scope.teamId, scope.operation, scope.key, request.fingerprint, request.path, leaseToken, this.options.leaseMs / 1000, this.options.ttlMs / 1000],
      });
      const row = rows[0] as ReserveRow;
      if (row.claimed > 0) return { outcome: 'reserved', leaseToken };
      if (row.same_request === null) {
        // Held by a request that committed after this statement's snapshot was taken: look again.
        if (attempt < 5) continue;
        return { outcome: 'in-progress' };
      }
      if (!row.same_request) return { outcome: 'mismatch', samePath: row.same_path === true };
      if (!row.completed) return { outcome: 'in-progress' };
      return { outcome: 'replay', response: { status: row.response_status!, headers: row.response_headers ?? {}, body: row.response_body ?? '' } };
    }
  }

  /**
   * Records `response` as the answer of the key held with `leaseToken`, on `db`: the transaction
   * of the work when it has one, else the pool. False when the lease is no longer this request's (it ran out and
   * a retry took the key over): the caller then rolls its work back.
   */
  async complete(scope: IdempotencyScope, leaseToken: string, response: StoredResponse, db: SqlClient = this.pool): Promise<boolean> {
    const { rowCount } = await db.query({
      name: 'idempotency-key-complete',
      text: `UPDATE idempotency_keys
                SET response_status = $5, response_headers = $6, response_body = $7, completed_at = now(), lease_token = NULL, locked_until = NULL
              WHERE team_id = $1 AND operation = $2 AND key = $3 AND lease_token = $4`,
      values: [scope.teamId, scope.operation, scope.key, leaseToken, response.status, JSON.stringify(response.headers), response.body],
    });
    return rowCount === 1;
  }

  /** Gives the key up (the request failed or was refused before doing anything): the next request with it runs anew. */
  async release(scope: IdempotencyScope, leaseToken: string): Promise<void> {
    await this.pool.query({
      name: 'idempotency-key-release',
      text: 'DELETE FROM idempotency_keys WHERE team_id = $1 AND operation = $2 AND key = $3 AND lease_token = $4',
      values: [scope.teamId, scope.operation, scope.key, leaseToken],
    });
  }
}

/**
 * Deletes up to `limit` records past their expiry, oldest first, skipping rows another replica's
 * pass holds and keys whose request still holds a lease.
 */
export async function deleteExpiredIdempotencyKeys(pool: SqlClient, limit: number): Promise<number> {
  const { rowCount } = await pool.query({
    name: 'idempotency-keys-delete-expired',
    text: `DELETE FROM idempotency_keys WHERE ctid IN (
             SELECT ctid FROM idempotency_keys
              WHERE expires_at <= now() AND (locked_until IS NULL OR locked_until <= now())
              ORDER BY expires_at
              LIMIT $1
                FOR UPDATE SKIP LOCKED)`,
    values: [limit],
  });
  return rowCount ?? 0;
}

export interface IdempotencyRetentionOptions {
  pool: SqlClient;
  logger: Logger;
  /** Records deleted per statement. */
  batchSize: number;
  /** Pause between passes once nothing expired is left. */
  intervalMs: number;
  onRemoved?: (count: number) => void;
  registry?: Registry;
}

/**
 * Keeps `idempotency_keys` to its expiry window: a pass deletes expired records batch after batch
 * until none is left, then waits. Every replica runs one; their batches skip each other's rows.
 */
export class IdempotencyKeyRetention {
  private readonly worker: BackgroundWorker;

  constructor(private readonly options: IdempotencyRetentionOptions) {
    this.worker = new BackgroundWorker({
      name: 'idempotency key retention',
      logger: options.logger,
      registry: options.registry,
      idleMs: options.intervalMs,
      pass: () => this.pass(),
    });
  }

  start(): void {
    this.worker.start();
  }

  async stop(): Promise<void> {
    await this.worker.stop();
  }

  /** Deletes every expired record now; resolves to how many. */
  async removeExpired(): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await deleteExpiredIdempotencyKeys(this.options.pool, this.options.batchSize);
      total += removed;
      if (removed > 0) this.options.onRemoved?.(removed);
      if (removed < this.options.batchSize) return total;
    }
  }

  private async pass(): Promise<'idle'> {
    const removed = await this.removeExpired();
    if (removed > 0) this.options.logger.info({ removed }, 'removed expired idempotency keys');
    return 'idle';
  }
}
