import { timestamp, type Queryable } from '@worklane/db';

export interface Organization {
  id: number;
  team_id: number;
  name: string;
  created_at: string;
  updated_at: string;
}

const COLUMNS = `id, team_id, name, ${timestamp('created_at')}, ${timestamp('updated_at')}`;

/** The team's organizations in creation order. */
export async function listOrganizations(db: Queryable, teamId: number): Promise<Organization[]> {
  const { rows } = await db.query<Organization>(`SELECT ${COLUMNS} FROM organizations WHERE team_id = $1 ORDER BY id`, [teamId]);
  return rows;
}

export async function createOrganization(db: Queryable, teamId: number, name: string): Promise<Organization> {
  const { rows } = await db.query<Organization>(`INSERT INTO organizations (team_id, name) VALUES ($1, $2) RETURNING ${COLUMNS}`, [teamId, name]);
  return rows[0]!;
}
