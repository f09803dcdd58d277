import { claimTeamQuota, timestamp, withTransaction, type InSameTransaction, type Pool, type Queryable } from '@worklane/db';

export interface Organization {
  id: number;
  team_id: number;
  name: string;
  created_at: string;
  updated_at: string;
}

const COLUMNS = `id, team_id, name, ${timestamp('created_at')}, ${timestamp('updated_at')}`;

/**
 * The team's organizations in creation order: after id `afterId` when given, at most `take` of
 * them (all when `take` is undefined, a set the per-team quota bounds).
 */
export async function listOrganizations(db: Queryable, teamId: number, page: { take?: number | undefined; afterId?: number | undefined } = {}): Promise<Organization[]> {
  const { rows } = await db.query<Organization>(`SELECT ${COLUMNS} FROM organizations WHERE team_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [
    teamId,
    page.afterId ?? 0,
    page.take ?? null,
  ]);
  return rows;
}

/**
 * Creates an organization unless the team holds `limit` already (TeamQuotaExceededError);
 * `recordIn` commits with it (the record of an idempotent request's answer).
 */
export function createOrganization(pool: Pool, teamId: number, name: string, limit: number, recordIn?: InSameTransaction<Organization>): Promise<Organization> {
  return withTransaction(pool, async (client) => {
    await claimTeamQuota(client, {
      resource: 'organizations',
      teamId,
      limit,
      count: async (db) => Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM organizations WHERE team_id = $1', [teamId])).rows[0]!.n),
    });
    const { rows } = await client.query<Organization>(`INSERT INTO organizations (team_id, name) VALUES ($1, $2) RETURNING ${COLUMNS}`, [teamId, name]);
    await recordIn?.(client, rows[0]!);
    return rows[0]!;
  });
}
