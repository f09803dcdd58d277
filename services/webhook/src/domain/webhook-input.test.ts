import { createWebhookInput, updateWebhookInput, urlSyntaxProblem } from '@worklane/api-contract';
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

describe('urlSyntaxProblem', () => {
  it.each(['https://hooks.example.com/worklane', 'HTTPS://Hooks.Example.com:8443/a?b=c#d', 'https://8.8.8.8/hook', 'https://[2001:4860:4860::8888]/'])('accepts %s', (url) =>
    expect(urlSyntaxProblem(url)).toBeUndefined(),
  );

  it.each([
    ['http://hooks.example.com/', 'The url field must be an absolute https:// URL.'],
    ['ftp://hooks.example.com/', 'The url field must be an absolute https:// URL.'],
    ['hooks.example.com/path', 'The url field must be an absolute https:// URL.'],
    ['https:hooks.example.com', 'The url field must be an absolute https:// URL.'],
    ['//hooks.example.com', 'The url field must be an absolute https:// URL.'],
    ['https://', 'The url field must be a valid URL.'],
    ['https://exa mple.com/', 'The url field must be a valid URL.'],
    ['https://example.com/\npath', 'The url field must be a valid URL.'],
    ['https://[::1/', 'The url field must be a valid URL.'],
    ['https://user:pass@example.com/', 'The url field must not contain credentials.'],
    ['https://token@example.com/', 'The url field must not contain credentials.'],
  ])('refuses %j', (url, message) => expect(urlSyntaxProblem(url)).toBe(message));
});

describe('createWebhookInput', () => {
  it('defaults active to true, the endpoint settings to none, and drops server-owned and unknown fields', () => {
    expect(parseBody(createWebhookInput, { url: 'https://8.8.8.8/', events: ['issue.created'], id: 3, team_id: 9, created_at: 'x', extra: 1 })).toEqual({
      url: 'https://8.8.8.8/',
      events: ['issue.created'],
      active: true,
      description: null,
      filters: { organization_ids: [], project_ids: [] },
      rate_limit_per_second: null,
      operational_events: [],
      ed25519_signing: false,
    });
  });

  it('reads filters as sorted lists without repeats; null or a missing list means every one', () => {
    const scoped = (filters: unknown) => parseBody(createWebhookInput, { url: 'https://8.8.8.8/', events: ['issue.created'], filters }).filters;
    expect(scoped({ organization_ids: [5, 2, 5] })).toEqual({ organization_ids: [2, 5], project_ids: [] });
    expect(scoped(null)).toEqual({ organization_ids: [], project_ids: [] });
    expect(errorsOf(() => scoped({ project_ids: Array.from({ length: 101 }, (_, index) => index + 1) }))).toEqual({
      'filters.project_ids': ['The list must not have more than 100 items.'],
    });
  });

  it('keeps operational events out of events', () => {
    expect(errorsOf(() => parseBody(createWebhookInput, { url: 'https://8.8.8.8/', events: ['webhook.disabled'], operational_events: ['issue.created'] }))).toEqual({
      'events.0': ['The selected events is invalid.'],
      'operational_events.0': ['The selected operational events is invalid.'],
    });
  });

  it('keeps the secret exactly as sent', () => {
    const input = parseBody(createWebhookInput, { url: 'https://8.8.8.8/', events: ['issue.updated'], secret: ' sixteen chars! ', active: false });
    expect(input).toMatchObject({ secret: ' sixteen chars! ', active: false });
  });

  it('requires url and events', () => {
    expect(errorsOf(() => parseBody(createWebhookInput, {}))).toEqual({
      url: ['The url field is required.'],
      events: ['The events field is required.'],
    });
  });

  it('refuses empty, unknown and duplicate events', () => {
    const base = { url: 'https://8.8.8.8/' };
    expect(errorsOf(() => parseBody(createWebhookInput, { ...base, events: [] }))).toEqual({ events: ['The events field must have at least 1 item.'] });
    expect(errorsOf(() => parseBody(createWebhookInput, { ...base, events: 'issue.created' }))).toEqual({ events: ['The events field must be an array.'] });
    expect(errorsOf(() => parseBody(createWebhookInput, { ...base, events: ['issue.created', 'issue.deleted'] }))).toEqual({
      'events.1': ['The selected events is invalid.'],
    });
    expect(errorsOf(() => parseBody(createWebhookInput, { ...base, events: ['issue.created', 'issue.created'] }))).toEqual({
      'events.1': ['The events.1 field has a duplicate value.'],
    });
  });

  it('limits the secret to 16..255 characters and active to booleans', () => {
    const base = { url: 'https://8.8.8.8/', events: ['issue.created'] };
    expect(errorsOf(() => parseBody(createWebhookInput, { ...base, secret: 'short' }))).toEqual({ secret: ['The secret field must be at least 16 characters.'] });
    expect(errorsOf(() => parseBody(createWebhookInput, { ...base, secret: 's'.repeat(256) }))).toEqual({
      secret: ['The secret field must not be greater than 255 characters.'],
    });
    expect(errorsOf(() => parseBody(createWebhookInput, { ...base, secret: 1234567890123456 }))).toEqual({ secret: ['The secret field must be a string.'] });
    expect(errorsOf(() => parseBody(createWebhookInput, { ...base, active: 'yes' }))).toEqual({ active: ['The active field must be true or false.'] });
    expect(parseBody(createWebhookInput, { ...base, secret: 's'.repeat(16) }).secret).toHaveLength(16);
  });

  it('limits the url to 2,048 characters', () => {
    const url = `https://8.8.8.8/${'p'.repeat(2048 - 'https://8.8.8.8/'.length)}`;
    expect(parseBody(createWebhookInput, { url, events: ['issue.created'] }).url).toHaveLength(2048);
    expect(errorsOf(() => parseBody(createWebhookInput, { url: `${url}p`, events: ['issue.created'] }))).toEqual({
      url: ['The url field must not be greater than 2048 characters.'],
    });
  });
});

describe('updateWebhookInput', () => {
  it('returns only what was sent, with null removing the secret', () => {
    expect(parseBody(updateWebhookInput, {})).toEqual({});
    expect(parseBody(updateWebhookInput, { secret: null })).toEqual({ secret: null });
    expect(parseBody(updateWebhookInput, { active: false, team_id: 4 })).toEqual({ active: false });
  });

  it('refuses null for url, events and active', () => {
    expect(errorsOf(() => parseBody(updateWebhookInput, { url: null, events: null, active: null }))).toEqual({
      url: ['The url field must not be null.'],
      events: ['The events field must not be null.'],
      active: ['The active field must not be null.'],
    });
  });
});

describe('a huge events array', () => {
  it('is refused with one error for its length, not one per item', () => {
    const events = Array.from({ length: 100_000 }, () => 'issue.created');
    expect(errorsOf(() => parseBody(createWebhookInput, { url: 'https://8.8.8.8/', events }))).toEqual({
      events: ['The events field must not have more than 2 items.'],
    });
    const invalid = Array.from({ length: 100_000 }, (_, index) => index);
    expect(Object.keys(errorsOf(() => parseBody(updateWebhookInput, { events: invalid })))).toEqual(['events']);
  });
});
