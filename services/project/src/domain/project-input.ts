import { fields } from '@worklane/http';
import { z } from 'zod';

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
  return (
    owner.length <= MAX_OWNER_LENGTH &&
    OWNER.test(owner) &&
    name.length <= MAX_REPOSITORY_NAME_LENGTH &&
    REPOSITORY_NAME.test(name) &&
    name !== '.' &&
    name !== '..'
  );
}

const MAX_GITHUB_REPOSITORY_LENGTH = MAX_OWNER_LENGTH + 1 + MAX_REPOSITORY_NAME_LENGTH;

const name = fields.requiredString(255);
const description = fields.nullableString(10_000);
const githubRepository = fields
  .nullableString(MAX_GITHUB_REPOSITORY_LENGTH)
  .refine((value) => value === null || isGithubRepository(value), {
    message: 'The github repository field must be a GitHub repository in owner/repo format.',
  });

/** POST .../projects: unknown and server-owned fields (id, slug, organization_id, timestamps) are dropped. */
export const createProjectInput = z.object({
  name,
  description: description.optional(),
  github_repository: githubRepository.optional(),
});

/** PATCH .../projects/{project}: only the fields sent change; name may not be null. */
export const updateProjectInput = z.object({
  name: name.optional(),
  description: description.optional(),
  github_repository: githubRepository.optional(),
});

export const createOrganizationInput = z.object({ name });
