import { boundedPageQuery, claimTeamQuota, isUniqueViolation, timestamp, withTransaction, type InSameTransaction, type Pool, type PoolClient, type Queryable } from '@worklane/db';
import { MAX_SLUG_LENGTH, slugCandidatePrefix, slugify } from '../domain/slug';

/** ProjectResource: exactly the fields the README's Project resource lists. */
export interface Project {
  id: number;
  organization_id: number;
  name: string;
  slug: string;
  description: string | null;
  github_repository: string | null;
  created_at: string;
  updated_at: string;
}

export interface ProjectScope {
  teamId: number;
  organizationId: number;
}

export interface NewProject {
  name: string;
  description?: string | null | undefined;
  github_repository?: string | null | undefined;
}

export type ProjectChanges = Partial<NewProject>;

/** Called each time a slug taken by a concurrent request forces another attempt. */
export type OnSlugConflict = () => void;

const SLUG_CONSTRAINT = 'projects_organization_id_slug_key';
/** Attempts before giving up on a slug race; from the second one on, slug allocation is serialised. */
const MAX_ATTEMPTS = 8;

/** The octets of a project's text: less than its JSON, so a page read by them misses no project that fits. */
const PROJECT_TEXT_BYTES = 'octet_length(name) + octet_length(slug) + coalesce(octet_length(description), 0) + coalesce(octet_length(github_repository), 0)';

const columns = (alias: string) =>
  [
    `${alias}.id`,
    `${alias}.organization_id`,
    `${alias}.name`,
    `${alias}.slug`,
    `${alias}.description`,
    `${alias}.github_repository`,
    timestamp(`${alias}.created_at`),
    timestamp(`${alias}.updated_at`),
  ].join(', ');

/**
 * CTEs `taken` and `free_slug`: the smallest free candidate of slug base `$base` in organization
 * `$organization`, ignoring project `$exclude` (the one being renamed). The n-th candidate is
 * domain/slug.ts's slugCandidate written in SQL. Among count(taken) + 1 candidates one is free.
 */
const freeSlugCtes = (p: { organization: string; base: string; prefixPattern: string; exclude: string }) => `
  taken AS (
    SELECT slug FROM projects
     WHERE organization_id = ${p.organization} AND slug LIKE ${p.prefixPattern} AND id <> ${p.exclude}
  ),
  free_slug AS (
    SELECT candidate AS slug
      FROM generate_series(0, (SELECT count(*) FROM taken)) AS n,
           LATERAL (SELECT CASE WHEN n = 0 THEN ${p.base}::text
                                ELSE rtrim(left(${p.base}::text, ${MAX_SLUG_LENGTH} - length('-' || n)), '-') || '-' || n
                           END AS candidate) AS c
     WHERE candidate NOT IN (SELECT slug FROM taken)
     ORDER BY n
     LIMIT 1
  )`;

// $1 organization, $2 team, $3 slug base, $4 prefix pattern, $5 name, $6 description, $7 repository
const INSERT_PROJECT = `
  WITH organization AS (SELECT id FROM organizations WHERE id = $1 AND team_id = $2),
  ${freeSlugCtes({ organization: '$1', base: '$3', prefixPattern: '$4', exclude: '0' })}
  INSERT INTO projects AS p (organization_id, name, slug, description, github_repository)
  SELECT organization.id, $5, free_slug.slug, $6, $7 FROM organization CROSS JOIN free_slug
  RETURNING ${columns('p')}`;

// $1 organization, $2 slug base, $3 prefix pattern, $4 project
const FREE_SLUG_FOR_RENAME = `
  WITH ${freeSlugCtes({ organization: '$1', base: '$2', prefixPattern: '$3', exclude: '$4' })}
  SELECT slug FROM free_slug`;

const slugPattern = (base: string) => `${slugCandidatePrefix(base)}%`;

/** Serialises slug allocation in one organization until the transaction ends. */
const lockSlugs = (client: PoolClient, organizationId: number) =>
  client.query(`SELECT pg_advisory_xact_lock(hashtextextended('worklane.project.slug:' || $1::text, 0))`, [organizationId]);

/**
 * Retries `attempt` when a concurrent request took the slug it chose; `serialised` is false only
 * on the first attempt, which is the common, uncontended case.
 */
async function retryingSlugRaces<T>(attempt: (serialised: boolean) => Promise<T>, onConflict?: OnSlugConflict): Promise<T> {
  for (let attemptNumber = 1; ; attemptNumber += 1) {
    try {
      return await attempt(attemptNumber > 1);
    } catch (error) {
      if (!isUniqueViolation(error, SLUG_CONSTRAINT) || attemptNumber >= MAX_ATTEMPTS) throw error;
      onConflict?.();
    }
  }
}

/**
 * The organization's page of projects, joined to the organization: $1 the organization, $2 the
 * team, $3 the cursor, $4 the row bound (NULL: all), $5 the byte budget (NULL: none).
 */
const PROJECT_PAGE = `SELECT ${columns('p')}
     FROM organizations o LEFT JOIN LATERAL (${boundedPageQuery({
       columns: '*',
       table: 'projects',
       where: 'organization_id = o.id AND id > $3',
       orderBy: 'id',
       limit: '$4',
       rowBytes: PROJECT_TEXT_BYTES,
       maxBytes: '$5',
     })}) p ON true
    WHERE o.id = $1 AND o.team_id = $2
    ORDER BY p.id`;

/**
 * The organization's projects in creation order, after id `afterId` when given, at most `take`
 * of them (all when `take` is undefined: a set the per-team quota bounds); with `maxBytes`, only
 * as many as may fit in a page of that many bytes, and the one after them (boundedPageQuery).
 * Undefined when the organization is not in the team. The page is joined to the organization, so
 * an organization past its last project still yields its one row with no project, telling "empty"
 * from "not yours".
 */
export async function listProjects(
  db: Queryable,
  scope: ProjectScope,
  page: { take?: number | undefined; afterId?: number | undefined; maxBytes?: number | undefined } = {},
): Promise<Project[] | undefined> {
  const { rows } = await db.query<Project>(PROJECT_PAGE, [scope.organizationId, scope.teamId, page.afterId ?? 0, page.take ?? null, page.maxBytes ?? null]);
  if (rows.length === 0) return undefined;
  return rows.filter((row) => row.id !== null);
}

/** The project when it is in the organization and the organization in the team. */
export async function findProject(db: Queryable, scope: ProjectScope, projectId: number): Promise<Project | undefined> {
  const { rows } = await db.query<Project>(
    `SELECT ${columns('p')}
       FROM projects p JOIN organizations o ON o.id = p.organization_id
      WHERE p.id = $1 AND p.organization_id = $2 AND o.team_id = $3`,
    [projectId, scope.organizationId, scope.teamId],
  );
  return rows[0];
}

/** How many projects the team holds, over all its organizations. */
async function countTeamProjects(db: Queryable, teamId: number): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM projects p JOIN organizations o ON o.id = p.organization_id WHERE o.team_id = $1`, [teamId]);
  return Number(rows[0]!.n);
}

/**
 * Creates a project with the smallest free slug of its name; undefined when the organization is
 * not in the team; TeamQuotaExceededError when the team holds `maxProjects` already. The quota
 * lock serialises creates within a team, which also makes the slug race rare. `recordIn` commits
 * with the project (the record of an idempotent request's answer).
 */
export function createProject(
  pool: Pool,
  scope: ProjectScope,
  project: NewProject,
  maxProjects: number,
  onConflict?: OnSlugConflict,
  recordIn?: InSameTransaction<Project>,
): Promise<Project | undefined> {
  const base = slugify(project.name);
  const values = [scope.organizationId, scope.teamId, base, slugPattern(base), project.name, project.description ?? null, project.github_repository ?? null];
  return retryingSlugRaces(
    (serialised) =>
      withTransaction(pool, async (client) => {
        await claimTeamQuota(client, { resource: 'projects', teamId: scope.teamId, limit: maxProjects, count: (db) => countTeamProjects(db, scope.teamId) });
        if (serialised) await lockSlugs(client, scope.organizationId);
        const created = (await client.query<Project>(INSERT_PROJECT, values)).rows[0];
        if (created) await recordIn?.(client, created);
        return created;
      }),
    onConflict,
  );
}

/**
 * Applies the fields present in `changes`. A new name gets a new slug; `updated_at` moves only
 * when something changed. Undefined when the project is not in the organization of the team.
 */
export function updateProject(pool: Pool, scope: ProjectScope, projectId: number, changes: ProjectChanges, onConflict?: OnSlugConflict): Promise<Project | undefined> {
  return retryingSlugRaces(
    () =>
      withTransaction(pool, async (client) => {
        const { rows } = await client.query<Project>(
          `SELECT ${columns('p')}
             FROM projects p JOIN organizations o ON o.id = p.organization_id
            WHERE p.id = $1 AND p.organization_id = $2 AND o.team_id = $3
              FOR UPDATE OF p`,
          [projectId, scope.organizationId, scope.teamId],
        );
        const current = rows[0];
        if (!current) return undefined;
        const next = {
          name: changes.name ?? current.name,
          description: changes.description === undefined ? current.description : changes.description,
          github_repository: changes.github_repository === undefined ? current.github_repository : changes.github_repository,
        };
        const renamed = next.name !== current.name;
        if (!renamed && next.description === current.description && next.github_repository === current.github_repository) return current;

        let slug = current.slug;
        if (renamed) {
          await lockSlugs(client, scope.organizationId);
          const base = slugify(next.name);
          const free = await client.query<{ slug: string }>(FREE_SLUG_FOR_RENAME, [scope.organizationId, base, slugPattern(base), projectId]);
          slug = free.rows[0]!.slug;
        }
        const updated = await client.query<Project>(
          `UPDATE projects AS p
              SET name = $2, slug = $3, description = $4, github_repository = $5, updated_at = now()
            WHERE p.id = $1
        RETURNING ${columns('p')}`,
          [projectId, next.name, slug, next.description, next.github_repository],
        );
        return updated.rows[0];
      }),
    onConflict,
  );
}
