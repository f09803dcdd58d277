import { z } from 'zod';
import { fields, id, timestamp } from './common';

/** Longest organization and project name. */
export const NAME_MAX_LENGTH = 255;
/** Longest project description. */
export const PROJECT_DESCRIPTION_MAX_LENGTH = 10_000;

const MAX_OWNER_LENGTH = 39;
const MAX_REPOSITORY_NAME_LENGTH = 100;
const OWNER = /^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$/;
const REPOSITORY_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * `owner/repo` as GitHub allows them: an owner of letters, digits and single inner hyphens (up to
 * 39 characters) and a repository name of letters, digits, `.`, `_` and `-` (up to 100), other
 * than `.` and `..`.
 */
export function isGithubRepository(value: string): boolean {
  const parts = value.split('/');
  if (parts.length !== 2) return false;
  const [owner = '', name = ''] = parts;
  return owner.length <= MAX_OWNER_LENGTH && OWNER.test(owner) && name.length <= MAX_REPOSITORY_NAME_LENGTH && REPOSITORY_NAME.test(name) && name !== '.' && name !== '..';
}

const MAX_GITHUB_REPOSITORY_LENGTH = MAX_OWNER_LENGTH + 1 + MAX_REPOSITORY_NAME_LENGTH;
/** The same rule as isGithubRepository, as a JSON Schema pattern. */
const GITHUB_REPOSITORY_PATTERN = `^(?=[^/]{1,${MAX_OWNER_LENGTH}}/)[A-Za-z0-9]+(-[A-Za-z0-9]+)*/(?!\\.{1,2}$)[A-Za-z0-9._-]{1,${MAX_REPOSITORY_NAME_LENGTH}}$`;

const name = fields.requiredString(NAME_MAX_LENGTH).meta({ examples: ['Backend API'] });
const description = fields.nullableString(PROJECT_DESCRIPTION_MAX_LENGTH);
const githubRepository = fields.nullableString(MAX_GITHUB_REPOSITORY_LENGTH).refine((value) => value === null || isGithubRepository(value), {
  message: 'The github repository field must be a GitHub repository in owner/repo format.',
});
/** In the document: `owner/repo` (owner up to 39 characters, name up to 100), an empty string or null. */
const githubRepositoryDocumented = githubRepository.meta({
  description: '`owner/repo` (owner up to 39 characters, repository name up to 100); an empty string or null removes it.',
  anyOf: [{ type: 'string', pattern: GITHUB_REPOSITORY_PATTERN, maxLength: MAX_GITHUB_REPOSITORY_LENGTH }, { type: 'string', const: '' }, { type: 'null' }],
  examples: ['acme/backend-api'],
});

/** POST .../organizations. */
export const createOrganizationInput = z.object({ name }).meta({ description: 'A new organization.', examples: [{ name: 'Platform' }] });

/** POST .../projects: unknown and server-owned fields (id, slug, organization_id, timestamps) are ignored. */
export const createProjectInput = z
  .object({
    name,
    description: description.optional(),
    github_repository: githubRepositoryDocumented.optional(),
  })
  .meta({
    description: 'A new project. Unknown and server-owned fields are ignored.',
    examples: [{ name: 'Backend API', description: 'The public API', github_repository: 'acme/backend-api' }],
  });

/** PATCH .../projects/{project}: only the fields sent change; name may not be null. */
export const updateProjectInput = z
  .object({
    name: name.optional(),
    description: description.optional(),
    github_repository: githubRepositoryDocumented.optional(),
  })
  .meta({ description: 'The fields to change; the others stay as they are. A new name makes a new slug.', examples: [{ description: null }] });

export type CreateProjectInput = z.infer<typeof createProjectInput>;
export type UpdateProjectInput = z.infer<typeof updateProjectInput>;

export const organization = z
  .object({
    id: id(),
    team_id: id(),
    name: z.string(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({
    description: 'An organization of a team; it owns projects.',
    examples: [{ id: 1, team_id: 1, name: 'Platform', created_at: '2026-01-15T09:00:00.123456Z', updated_at: '2026-01-15T09:00:00.123456Z' }],
  });

export const project = z
  .object({
    id: id(),
    organization_id: id(),
    name: z.string(),
    slug: z.string().meta({ description: 'Made from the name (`Backend API` → `backend-api`), unique in the organization (`-1`, `-2`, ... when taken).' }),
    description: z.string().nullable(),
    github_repository: z.string().nullable().meta({ description: '`owner/repo` or null.' }),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({
    description: 'A project of an organization; it owns issues.',
    examples: [
      {
        id: 7,
        organization_id: 1,
        name: 'Backend API',
        slug: 'backend-api',
        description: null,
        github_repository: 'acme/backend-api',
        created_at: '2026-01-15T09:00:00.123456Z',
        updated_at: '2026-01-15T09:00:00.123456Z',
      },
    ],
  });

export type Organization = z.infer<typeof organization>;
export type Project = z.infer<typeof project>;
