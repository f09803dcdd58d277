import { createProjectInput, isGithubRepository, updateProjectInput } from '@worklane/api-contract';
import { HttpError, parseBody } from '@worklane/http';

const errorsOf = (run: () => unknown): Record<string, string[]> => {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpError && error.status === 422) return error.errors ?? {};
    throw error;
  }
  throw new Error('expected a 422');
};

describe('isGithubRepository', () => {
  it.each(['laravel/framework', 'a/b', 'octo-cat/hello.world', 'x1/_private-repo.v2', `${'a'.repeat(39)}/${'r'.repeat(100)}`, 'A-b-C/.github'])('accepts %s', (value) =>
    expect(isGithubRepository(value)).toBe(true),
  );

  it.each([
    'laravel',
    'laravel/',
    '/framework',
    'a/b/c',
    '-owner/repo',
    'owner-/repo',
    'ow--ner/repo',
    'own_er/repo',
    `${'a'.repeat(40)}/repo`,
    `owner/${'r'.repeat(101)}`,
    'owner/.',
    'owner/..',
    'owner/re po',
    'owner/répo',
    'https://github.com/owner/repo',
  ])('refuses %s', (value) => expect(isGithubRepository(value)).toBe(false));
});

describe('createProjectInput', () => {
  it('keeps the known fields, trims them and drops server-owned and unknown ones', () => {
    const input = parseBody(createProjectInput, {
      name: '  Backend API ',
      description: ' Core services ',
      github_repository: 'acme/backend',
      id: 99,
      slug: 'chosen',
      organization_id: 7,
      created_at: 'yesterday',
      colour: 'blue',
    });
    expect(input).toEqual({ name: 'Backend API', description: 'Core services', github_repository: 'acme/backend' });
  });

  it('treats empty optional strings as null', () => {
    expect(parseBody(createProjectInput, { name: 'x', description: '', github_repository: ' ' })).toEqual({
      name: 'x',
      description: null,
      github_repository: null,
    });
  });

  it('requires a name of 1 to 255 characters', () => {
    expect(errorsOf(() => parseBody(createProjectInput, {}))).toEqual({ name: ['The name field is required.'] });
    expect(errorsOf(() => parseBody(createProjectInput, { name: '   ' }))).toEqual({ name: ['The name field is required.'] });
    expect(errorsOf(() => parseBody(createProjectInput, { name: 'x'.repeat(256) }))).toEqual({
      name: ['The name field must not be greater than 255 characters.'],
    });
    expect(parseBody(createProjectInput, { name: 'x'.repeat(255) }).name).toHaveLength(255);
  });

  it('reports every field of the wrong type at once', () => {
    expect(errorsOf(() => parseBody(createProjectInput, { name: 12, description: ['x'], github_repository: false }))).toEqual({
      name: ['The name field must be a string.'],
      description: ['The description field must be a string.'],
      github_repository: ['The github repository field must be a string.'],
    });
  });

  it('limits the description to 10,000 characters', () => {
    expect(parseBody(createProjectInput, { name: 'x', description: 'd'.repeat(10_000) }).description).toHaveLength(10_000);
    expect(errorsOf(() => parseBody(createProjectInput, { name: 'x', description: 'd'.repeat(10_001) }))).toEqual({
      description: ['The description field must not be greater than 10000 characters.'],
    });
  });

  it('refuses a repository that is not owner/repo', () => {
    expect(errorsOf(() => parseBody(createProjectInput, { name: 'x', github_repository: 'not a repo' }))).toEqual({
      github_repository: ['The github repository field must be a GitHub repository in owner/repo format.'],
    });
  });
});

describe('updateProjectInput', () => {
  it('returns only the fields that were sent', () => {
    expect(parseBody(updateProjectInput, {})).toEqual({});
    expect(parseBody(updateProjectInput, { description: null })).toEqual({ description: null });
    expect(parseBody(updateProjectInput, { github_repository: null, slug: 'ignored' })).toEqual({ github_repository: null });
  });

  it('refuses a null or empty name', () => {
    expect(errorsOf(() => parseBody(updateProjectInput, { name: null }))).toEqual({ name: ['The name field must not be null.'] });
    expect(errorsOf(() => parseBody(updateProjectInput, { name: '' }))).toEqual({ name: ['The name field is required.'] });
  });
});
