import { isUniqueViolation, timestamp, withTransaction, type Pool, type Queryable } from '@worklane/db';

export interface UserRecord {
  id: number;
  email: string;
  name: string;
  created_at: string;
}

export interface UserWithPassword extends UserRecord {
  password_hash: string;
}

export interface TeamRecord {
  id: number;
  name: string;
  created_at: string;
}

export type Role = 'owner' | 'member';

export interface MembershipRecord {
  team_id: number;
  user_id: number;
  role: Role;
  team_name: string;
}

export class DuplicateEmailError extends Error {}
export class AlreadyMemberError extends Error {}

const USER_COLUMNS = `id, email, name, ${timestamp('created_at')}`;

export async function insertUser(db: Queryable, user: { email: string; name: string; passwordHash: string }): Promise<UserRecord> {
  try {
    const { rows } = await db.query<UserRecord>(`INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3) RETURNING ${USER_COLUMNS}`, [
      user.email,
      user.name,
      user.passwordHash,
    ]);
    return rows[0]!;
  } catch (error) {
    if (isUniqueViolation(error, 'users_email_key')) throw new DuplicateEmailError(user.email);
    throw error;
  }
}

/** The user with this address in any letter case. */
export async function findUserByEmail(db: Queryable, email: string): Promise<UserWithPassword | undefined> {
  const { rows } = await db.query<UserWithPassword>(`SELECT ${USER_COLUMNS}, password_hash FROM users WHERE lower(email) = lower($1)`, [email]);
  return rows[0];
}

export async function findUser(db: Queryable, id: number): Promise<UserRecord | undefined> {
  const { rows } = await db.query<UserRecord>(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [id]);
  return rows[0];
}

export async function findTeam(db: Queryable, id: number): Promise<TeamRecord | undefined> {
  const { rows } = await db.query<TeamRecord>(`SELECT id, name, ${timestamp('created_at')} FROM teams WHERE id = $1`, [id]);
  return rows[0];
}

/** A new team with its first member as owner, both or neither. */
export function insertTeamWithOwner(pool: Pool, name: string, ownerUserId: number): Promise<TeamRecord> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<TeamRecord>(`INSERT INTO teams (name) VALUES ($1) RETURNING id, name, ${timestamp('created_at')}`, [name]);
    const team = rows[0]!;
    await client.query(`INSERT INTO memberships (team_id, user_id, role) VALUES ($1, $2, 'owner')`, [team.id, ownerUserId]);
    return team;
  });
}

export async function insertMembership(db: Queryable, teamId: number, userId: number, role: Role): Promise<MembershipRecord> {
  try {
    const { rows } = await db.query<MembershipRecord>(
      `WITH added AS (INSERT INTO memberships (team_id, user_id, role) VALUES ($1, $2, $3) RETURNING team_id, user_id, role)
       SELECT added.team_id, added.user_id, added.role, teams.name AS team_name FROM added JOIN teams ON teams.id = added.team_id`,
      [teamId, userId, role],
    );
    return rows[0]!;
  } catch (error) {
    if (isUniqueViolation(error, 'memberships_pkey')) throw new AlreadyMemberError();
    throw error;
  }
}

export async function findMembership(db: Queryable, teamId: number, userId: number): Promise<MembershipRecord | undefined> {
  const { rows } = await db.query<MembershipRecord>(
    `SELECT m.team_id, m.user_id, m.role, t.name AS team_name
       FROM memberships m JOIN teams t ON t.id = m.team_id
      WHERE m.team_id = $1 AND m.user_id = $2`,
    [teamId, userId],
  );
  return rows[0];
}

/** The user's teams in the order they joined them. */
export async function listMemberships(db: Queryable, userId: number): Promise<MembershipRecord[]> {
  const { rows } = await db.query<MembershipRecord>(
    `SELECT m.team_id, m.user_id, m.role, t.name AS team_name
       FROM memberships m JOIN teams t ON t.id = m.team_id
      WHERE m.user_id = $1
      ORDER BY m.created_at, m.team_id`,
    [userId],
  );
  return rows;
}
