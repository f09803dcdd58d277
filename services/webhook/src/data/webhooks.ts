import type { WebhookEvent } from '@worklane/api-contract';
import { claimTeamQuota, timestamp, withTransaction, type InSameTransaction, type Pool, type Queryable } from '@worklane/db';

/** WebhookResource: exactly the fields the README's Webhook resource lists. The secret is never part of it. */
export interface Webhook {
  id: number;
  team_id: number;
  url: string;
  events: WebhookEvent[];
  active: boolean;
  created_at: string;
  updated_at: string;
}

/** A webhook as the delivery service needs it: with its secret, still sealed. */
export interface SealedSubscription {
  id: number;
  team_id: number;
  url: string;
  events: WebhookEvent[];
  active: boolean;
  secret_sealed: string | null;
}

export interface NewWebhook {
  url: string;
  events: WebhookEvent[];
  active: boolean;
  secretSealed: string | null;
}

export interface WebhookChanges {
  url?: string | undefined;
  events?: WebhookEvent[] | undefined;
  active?: boolean | undefined;
  /** A sealed new secret, or null to remove it. */
  secretSealed?: string | null | undefined;
}

const RESOURCE = `id, team_id, url, events, active, ${timestamp('created_at')}, ${timestamp('updated_at')}`;
const SUBSCRIPTION = 'id, team_id, url, events, active, secret_sealed';

/**
 * The team's webhooks, newest first: before id `beforeId` when given, at most `take` of them
 * (all when `take` is undefined, a set the per-team quota bounds).
 */
export async function listWebhooks(db: Queryable, teamId: number, page: { take?: number | undefined; beforeId?: number | undefined } = {}): Promise<Webhook[]> {
  const { rows } = await db.query<Webhook>(`SELECT ${RESOURCE} FROM webhooks WHERE team_id = $1 AND ($2::bigint IS NULL OR id < $2) ORDER BY id DESC LIMIT $3`, [
    teamId,
    page.beforeId ?? null,
    page.take ?? null,
  ]);
  return rows;
}

export async function findWebhook(db: Queryable, teamId: number, webhookId: number): Promise<Webhook | undefined> {
  const { rows } = await db.query<Webhook>(`SELECT ${RESOURCE} FROM webhooks WHERE id = $1 AND team_id = $2`, [webhookId, teamId]);
  return rows[0];
}

/**
 * Creates a webhook unless the team holds `maxWebhooks` already (TeamQuotaExceededError);
 * `recordIn` commits with it (the record of an idempotent request's answer).
 */
export function createWebhook(pool: Pool, teamId: number, webhook: NewWebhook, maxWebhooks: number, recordIn?: InSameTransaction<Webhook>): Promise<Webhook> {
  return withTransaction(pool, async (client) => {
    await claimTeamQuota(client, {
      resource: 'webhooks',
      teamId,
      limit: maxWebhooks,
      count: async (db) => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM webhooks WHERE team_id = $1', [teamId])).rows[0]!.n),
    });
    const { rows } = await client.query<Webhook>(`INSERT INTO webhooks (team_id, url, events, active, secret_sealed) VALUES ($1, $2, $3, $4, $5) RETURNING ${RESOURCE}`, [
      teamId,
      webhook.url,
      webhook.events,
      webhook.active,
      webhook.secretSealed,
    ]);
    await recordIn?.(client, rows[0]!);
    return rows[0]!;
  });
}

const sameEvents = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((event, index) => event === b[index]);

/**
 * Applies the fields present in `changes`; `updated_at` moves only when something changed.
 * Undefined when the webhook is not in the team.
 */
export function updateWebhook(pool: Pool, teamId: number, webhookId: number, changes: WebhookChanges): Promise<Webhook | undefined> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<Webhook & { secret_sealed: string | null }>(`SELECT ${RESOURCE}, secret_sealed FROM webhooks WHERE id = $1 AND team_id = $2 FOR UPDATE`, [
      webhookId,
      teamId,
    ]);
    const current = rows[0];
    if (!current) return undefined;
    const { secret_sealed: currentSecret, ...resource } = current;
    const next = {
      url: changes.url ?? current.url,
      events: changes.events ?? current.events,
      active: changes.active ?? current.active,
      // A new secret always counts as a change: sealed values never compare equal.
      secretSealed: changes.secretSealed === undefined ? currentSecret : changes.secretSealed,
    };
    const unchanged = next.url === current.url && sameEvents(next.events, current.events) && next.active === current.active && next.secretSealed === currentSecret;
    if (unchanged) return resource;
    const updated = await client.query<Webhook>(
      `UPDATE webhooks SET url = $2, events = $3, active = $4, secret_sealed = $5, updated_at = now() WHERE id = $1 RETURNING ${RESOURCE}`,
      [webhookId, next.url, next.events, next.active, next.secretSealed],
    );
    return updated.rows[0];
  });
}

/** Deletes the webhook for good; false when it is not in the team. */
export async function deleteWebhook(db: Queryable, teamId: number, webhookId: number): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM webhooks WHERE id = $1 AND team_id = $2', [webhookId, teamId]);
  return rowCount === 1;
}

/** Active webhooks of the team subscribed to `event`, oldest first. */
export async function listSubscriptions(db: Queryable, teamId: number, event: WebhookEvent): Promise<SealedSubscription[]> {
  const { rows } = await db.query<SealedSubscription>(`SELECT ${SUBSCRIPTION} FROM webhooks WHERE team_id = $1 AND active AND $2 = ANY (events) ORDER BY id`, [teamId, event]);
  return rows;
}

export async function findSubscription(db: Queryable, teamId: number, webhookId: number): Promise<SealedSubscription | undefined> {
  const { rows } = await db.query<SealedSubscription>(`SELECT ${SUBSCRIPTION} FROM webhooks WHERE id = $1 AND team_id = $2`, [webhookId, teamId]);
  return rows[0];
}

/**
 * Re-encrypts, under the current key, the secrets sealed by `previousKeyIds`, in batches that
 * skip rows other replicas are handling. `reseal` returns undefined for a secret it cannot open,
 * which is left as it is. Resolves to how many were re-encrypted and which could not be.
 */
export async function resealSecrets(
  pool: Pool,
  previousKeyIds: readonly string[],
  reseal: (sealed: string, teamId: number) => string | undefined,
  batchSize = 200,
): Promise<{ resealed: number; failed: number[] }> {
  const outcome = { resealed: 0, failed: [] as number[] };
  if (previousKeyIds.length === 0) return outcome;
  // Walking by id guarantees an end even when some rows cannot be resealed.
  let after = 0;
  for (;;) {
    const batch = await withTransaction(pool, async (client) => {
      const { rows } = await client.query<{ id: number; team_id: number; secret_sealed: string }>(
        `SELECT id, team_id, secret_sealed FROM webhooks
          WHERE id > $3 AND secret_sealed IS NOT NULL AND split_part(secret_sealed, '.', 2) = ANY ($1)
          ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [previousKeyIds, batchSize, after],
      );
      for (const row of rows) {
        const resealed = reseal(row.secret_sealed, row.team_id);
        if (resealed === undefined) {
          outcome.failed.push(row.id);
          continue;
        }
        await client.query('UPDATE webhooks SET secret_sealed = $2 WHERE id = $1', [row.id, resealed]);
        outcome.resealed += 1;
      }
      return rows;
    });
    if (batch.length < batchSize) return outcome;
    after = batch[batch.length - 1]!.id;
  }
}
