import type { OperationalEvent, WebhookEvent } from '@worklane/api-contract';
import { claimTeamQuota, timestamp, untilShortBatch, withTransaction, type InSameTransaction, type Pool, type PoolClient, type Queryable } from '@worklane/db';
import type { SealedKind } from '../domain/secrets';

export interface WebhookFilters {
  organization_ids: number[];
  project_ids: number[];
}

/** WebhookResource: the fields the API answers with. Secrets and private keys are never part of it. */
export interface Webhook {
  id: number;
  team_id: number;
  url: string;
  events: WebhookEvent[];
  active: boolean;
  created_at: string;
  updated_at: string;
  description: string | null;
  filters: WebhookFilters;
  rate_limit_per_second: number | null;
  operational_events: OperationalEvent[];
  disabled_reason: string | null;
  disabled_at: string | null;
  ed25519_public_key: string | null;
  secret_rotated_at: string | null;
}

/** A webhook as the delivery service needs it: with its secrets and key, still sealed. */
export interface SealedSubscription {
  id: number;
  team_id: number;
  url: string;
  events: WebhookEvent[];
  active: boolean;
  secret_sealed: string | null;
  /** Old secrets still signing, newest first. */
  previous_secrets: { secret_sealed: string; expires_at_ms: number }[];
  ed25519_key_sealed: string | null;
  organization_ids: number[];
  project_ids: number[];
  rate_limit_per_second: number | null;
  operational_events: OperationalEvent[];
}

/** An ed25519 key as stored: the seed sealed, the public key in clear. */
export interface SealedEd25519Key {
  sealed: string;
  publicKey: string;
}

export interface NewWebhook {
  url: string;
  events: WebhookEvent[];
  active: boolean;
  secretSealed: string | null;
  description: string | null;
  filters: WebhookFilters;
  rateLimitPerSecond: number | null;
  operationalEvents: OperationalEvent[];
  ed25519: SealedEd25519Key | null;
}

export interface WebhookChanges {
  url?: string | undefined;
  events?: WebhookEvent[] | undefined;
  active?: boolean | undefined;
  /** A sealed new secret, or null to remove it; either ends the overlap of earlier rotations. */
  secretSealed?: string | null | undefined;
  description?: string | null | undefined;
  filters?: WebhookFilters | undefined;
  rateLimitPerSecond?: number | null | undefined;
  operationalEvents?: OperationalEvent[] | undefined;
  /** Turns ed25519 signing on (`newKey` makes the key when there is none yet) or off. */
  ed25519?: { enabled: boolean; newKey: () => SealedEd25519Key } | undefined;
}

const RESOURCE = [
  'id',
  'team_id',
  'url',
  'events',
  'active',
  timestamp('created_at'),
  timestamp('updated_at'),
  'description',
  // int8[] would come back as strings; through JSON they are numbers.
  `json_build_object('organization_ids', to_json(organization_ids), 'project_ids', to_json(project_ids)) AS filters`,
  'rate_limit_per_second',
  'operational_events',
  'disabled_reason',
  timestamp('disabled_at'),
  'ed25519_public_key',
  timestamp('secret_rotated_at'),
].join(', ');

const SUBSCRIPTION = `w.id, w.team_id, w.url, w.events, w.active, w.secret_sealed, w.ed25519_key_sealed,
  to_json(w.organization_ids) AS organization_ids, to_json(w.project_ids) AS project_ids, w.rate_limit_per_second, w.operational_events,
  COALESCE((SELECT json_agg(json_build_object('secret_sealed', p.secret_sealed, 'expires_at_ms', floor(extract(epoch FROM p.expires_at) * 1000)::bigint) ORDER BY p.id DESC)
              FROM webhook_previous_secrets p WHERE p.webhook_id = w.id AND p.expires_at > now()), '[]'::json) AS previous_secrets`;

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
    const { rows } = await client.query<Webhook>(
      `INSERT INTO webhooks (team_id, url, events, active, secret_sealed, description, organization_ids, project_ids, rate_limit_per_second, operational_events, ed25519_key_sealed, ed25519_public_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${RESOURCE}`,
      [
        teamId,
        webhook.url,
        webhook.events,
        webhook.active,
        webhook.secretSealed,
        webhook.description,
        webhook.filters.organization_ids,
        webhook.filters.project_ids,
        webhook.rateLimitPerSecond,
        webhook.operationalEvents,
        webhook.ed25519?.sealed ?? null,
        webhook.ed25519?.publicKey ?? null,
      ],
    );
    await recordIn?.(client, rows[0]!);
    return rows[0]!;
  });
}

const sameList = <T>(a: readonly T[], b: readonly T[]) => a.length === b.length && a.every((item, index) => item === b[index]);

type CurrentRow = Webhook & { secret_sealed: string | null };

/** `column = $n` assignments of the fields `changes` really changes, with their parameters. */
function assignmentsFor(current: CurrentRow, changes: WebhookChanges): { sets: string[]; values: unknown[]; secretChanged: boolean } {
  const sets: string[] = [];
  const values: unknown[] = [];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`${column} = $${values.length + 2}`);
  };
  if (changes.url !== undefined && changes.url !== current.url) set('url', changes.url);
  if (changes.events !== undefined && !sameList(changes.events, current.events)) set('events', changes.events);
  if (changes.active !== undefined && changes.active !== current.active) {
    set('active', changes.active);
    // Activated by its team: whatever switched it off is history.
    if (changes.active) sets.push('disabled_reason = NULL', 'disabled_at = NULL');
  }
  // A new secret always counts as a change: sealed values never compare equal.
  const secretChanged = changes.secretSealed !== undefined && !(changes.secretSealed === null && current.secret_sealed === null);
  if (secretChanged) {
    set('secret_sealed', changes.secretSealed);
    sets.push('secret_rotated_at = now()');
  }
  if (changes.description !== undefined && changes.description !== current.description) set('description', changes.description);
  if (changes.filters !== undefined) {
    if (!sameList(changes.filters.organization_ids, current.filters.organization_ids)) set('organization_ids', changes.filters.organization_ids);
    if (!sameList(changes.filters.project_ids, current.filters.project_ids)) set('project_ids', changes.filters.project_ids);
  }
  if (changes.rateLimitPerSecond !== undefined && changes.rateLimitPerSecond !== current.rate_limit_per_second) set('rate_limit_per_second', changes.rateLimitPerSecond);
  if (changes.operationalEvents !== undefined && !sameList([...changes.operationalEvents].sort(), [...current.operational_events].sort())) {
    set('operational_events', changes.operationalEvents);
  }
  if (changes.ed25519 !== undefined && changes.ed25519.enabled !== (current.ed25519_public_key !== null)) {
    const key = changes.ed25519.enabled ? changes.ed25519.newKey() : null;
    set('ed25519_key_sealed', key?.sealed ?? null);
    set('ed25519_public_key', key?.publicKey ?? null);
  }
  return { sets, values, secretChanged };
}

/**
 * Applies the fields present in `changes`; `updated_at` moves only when something changed. A
 * changed secret ends the overlap of earlier rotations: their old secrets stop signing.
 * Undefined when the webhook is not in the team.
 */
export function updateWebhook(pool: Pool, teamId: number, webhookId: number, changes: WebhookChanges): Promise<Webhook | undefined> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<CurrentRow>(`SELECT ${RESOURCE}, secret_sealed FROM webhooks WHERE id = $1 AND team_id = $2 FOR UPDATE`, [webhookId, teamId]);
    const current = rows[0];
    if (!current) return undefined;
    const { secret_sealed: _secret, ...resource } = current;
    const { sets, values, secretChanged } = assignmentsFor(current, changes);
    if (sets.length === 0) return resource;
    if (secretChanged) await client.query('DELETE FROM webhook_previous_secrets WHERE webhook_id = $1', [webhookId]);
    const updated = await client.query<Webhook>(`UPDATE webhooks SET ${sets.join(', ')}, updated_at = now() WHERE id = $1 AND team_id = $2 RETURNING ${RESOURCE}`, [
      webhookId,
      teamId,
      ...values,
    ]);
    return updated.rows[0];
  });
}

export interface SecretRotation {
  /** The new secret, sealed. */
  secretSealed: string;
  /** How long the replaced secret keeps signing; 0 drops it at once. */
  overlapSeconds: number;
  /** Old secrets still signing that a webhook may hold at most. */
  maxPreviousSecrets: number;
  /** Whether the new secret is the current one (a rotation must change it). */
  isCurrent: (currentSealed: string) => boolean;
}

export type RotationOutcome = { outcome: 'rotated'; webhook: Webhook } | { outcome: 'not_found' } | { outcome: 'unchanged' } | { outcome: 'limit'; maxPreviousSecrets: number };

/**
 * Makes `secretSealed` the webhook's secret. The replaced one keeps signing for `overlapSeconds`
 * unless the webhook holds `maxPreviousSecrets` old secrets still valid already (then nothing
 * changes). Expired old secrets are deleted on the way. The webhook's row lock orders concurrent
 * rotations, so the bound holds.
 */
export function rotateSecret(pool: Pool, teamId: number, webhookId: number, rotation: SecretRotation): Promise<RotationOutcome> {
  return withTransaction(pool, async (client): Promise<RotationOutcome> => {
    const { rows } = await client.query<{ secret_sealed: string | null }>('SELECT secret_sealed FROM webhooks WHERE id = $1 AND team_id = $2 FOR UPDATE', [webhookId, teamId]);
    if (!rows[0]) return { outcome: 'not_found' };
    const current = rows[0].secret_sealed;
    if (current !== null && rotation.isCurrent(current)) return { outcome: 'unchanged' };
    await client.query('DELETE FROM webhook_previous_secrets WHERE webhook_id = $1 AND expires_at <= now()', [webhookId]);
    if (current !== null && rotation.overlapSeconds > 0) {
      const held = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM webhook_previous_secrets WHERE webhook_id = $1', [webhookId])).rows[0]!.n);
      if (held >= rotation.maxPreviousSecrets) return { outcome: 'limit', maxPreviousSecrets: rotation.maxPreviousSecrets };
      await client.query(`INSERT INTO webhook_previous_secrets (webhook_id, secret_sealed, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`, [
        webhookId,
        current,
        rotation.overlapSeconds,
      ]);
    }
    const updated = await client.query<Webhook>(
      `UPDATE webhooks SET secret_sealed = $3, secret_rotated_at = now(), updated_at = now() WHERE id = $1 AND team_id = $2 RETURNING ${RESOURCE}`,
      [webhookId, teamId, rotation.secretSealed],
    );
    return { outcome: 'rotated', webhook: updated.rows[0]! };
  });
}

/** Deletes the webhook for good (its old secrets with it); false when it is not in the team. */
export async function deleteWebhook(db: Queryable, teamId: number, webhookId: number): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM webhooks WHERE id = $1 AND team_id = $2', [webhookId, teamId]);
  return rowCount === 1;
}

/**
 * Active webhooks of the team that receive `event`, oldest first: an issue event through
 * `events`, an operational event through `operational_events`.
 */
export async function listSubscriptions(db: Queryable, teamId: number, event: WebhookEvent | OperationalEvent, operational: boolean): Promise<SealedSubscription[]> {
  const column = operational ? 'w.operational_events' : 'w.events';
  const { rows } = await db.query<SealedSubscription>(`SELECT ${SUBSCRIPTION} FROM webhooks w WHERE w.team_id = $1 AND w.active AND $2 = ANY (${column}) ORDER BY w.id`, [
    teamId,
    event,
  ]);
  return rows;
}

export async function findSubscription(db: Queryable, teamId: number, webhookId: number): Promise<SealedSubscription | undefined> {
  const { rows } = await db.query<SealedSubscription>(`SELECT ${SUBSCRIPTION} FROM webhooks w WHERE w.id = $1 AND w.team_id = $2`, [webhookId, teamId]);
  return rows[0];
}

/**
 * Switches an active webhook off with `reason` recorded (the delivery service's auto-disable).
 * One that is inactive already keeps its state, so a repeated call changes nothing. Undefined
 * when the webhook is not in the team.
 */
export async function disableWebhook(pool: Pool, teamId: number, webhookId: number, reason: string): Promise<SealedSubscription | undefined> {
  await pool.query(`UPDATE webhooks SET active = false, disabled_reason = $3, disabled_at = now(), updated_at = now() WHERE id = $1 AND team_id = $2 AND active`, [
    webhookId,
    teamId,
    reason,
  ]);
  return findSubscription(pool, teamId, webhookId);
}

/** One column of sealed values, walked by row id for re-encryption. */
interface SealedColumn {
  kind: SealedKind;
  /** Rows after id $3 sealed by a key of $1, at most $2: `id`, `webhook_id`, `team_id`, `sealed`. */
  select: string;
  /** Sets the row $1's value to $2. */
  update: string;
}

const SEALED_COLUMNS: SealedColumn[] = [
  {
    kind: 'secret',
    select: `SELECT id, id AS webhook_id, team_id, secret_sealed AS sealed FROM webhooks
              WHERE id > $3 AND secret_sealed IS NOT NULL AND split_part(secret_sealed, '.', 2) = ANY ($1)
              ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    update: 'UPDATE webhooks SET secret_sealed = $2 WHERE id = $1',
  },
  {
    kind: 'ed25519',
    select: `SELECT id, id AS webhook_id, team_id, ed25519_key_sealed AS sealed FROM webhooks
              WHERE id > $3 AND ed25519_key_sealed IS NOT NULL AND split_part(ed25519_key_sealed, '.', 2) = ANY ($1)
              ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    update: 'UPDATE webhooks SET ed25519_key_sealed = $2 WHERE id = $1',
  },
  {
    kind: 'secret',
    select: `SELECT p.id, p.webhook_id, w.team_id, p.secret_sealed AS sealed FROM webhook_previous_secrets p JOIN webhooks w ON w.id = p.webhook_id
              WHERE p.id > $3 AND split_part(p.secret_sealed, '.', 2) = ANY ($1)
              ORDER BY p.id LIMIT $2 FOR UPDATE OF p SKIP LOCKED`,
    update: 'UPDATE webhook_previous_secrets SET secret_sealed = $2 WHERE id = $1',
  },
];

async function resealColumn(
  pool: Pool,
  column: SealedColumn,
  previousKeyIds: readonly string[],
  reseal: (sealed: string, teamId: number, kind: SealedKind) => string | undefined,
  batchSize: number,
  outcome: { resealed: number; failed: number[] },
): Promise<void> {
  // Walking by id guarantees an end even when some rows cannot be resealed.
  let after = 0;
  const resealBatch = async () => {
    const batch = await withTransaction(pool, async (client: PoolClient) => {
      const { rows } = await client.query<{ id: number; webhook_id: number; team_id: number; sealed: string }>(column.select, [previousKeyIds, batchSize, after]);
      for (const row of rows) {
        const resealed = reseal(row.sealed, row.team_id, column.kind);
        if (resealed === undefined) {
          if (!outcome.failed.includes(row.webhook_id)) outcome.failed.push(row.webhook_id);
          continue;
        }
        await client.query(column.update, [row.id, resealed]);
        outcome.resealed += 1;
      }
      return rows;
    });
    if (batch.length > 0) after = batch[batch.length - 1]!.id;
    return batch.length;
  };
  await untilShortBatch(resealBatch, batchSize);
}

/**
 * Re-encrypts, under the current key, the values sealed by `previousKeyIds` (secrets, old secrets
 * of rotations, ed25519 keys), in batches that skip rows other replicas are handling. `reseal`
 * returns undefined for a value it cannot open, which is left as it is. Resolves to how many were
 * re-encrypted and the webhooks with a value that could not be.
 */
export async function resealSecrets(
  pool: Pool,
  previousKeyIds: readonly string[],
  reseal: (sealed: string, teamId: number, kind: SealedKind) => string | undefined,
  batchSize = 200,
): Promise<{ resealed: number; failed: number[] }> {
  const outcome = { resealed: 0, failed: [] as number[] };
  if (previousKeyIds.length === 0) return outcome;
  for (const column of SEALED_COLUMNS) await resealColumn(pool, column, previousKeyIds, reseal, batchSize, outcome);
  return outcome;
}
