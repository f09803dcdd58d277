import { EMPTY_SLUG, MAX_SLUG_LENGTH, slugCandidate, slugCandidatePrefix, slugify, transliterate } from './slug';

describe('slugify (Laravel Str::slug)', () => {
  it.each([
    ['Backend API', 'backend-api'],
    ['  Backend   API  ', 'backend-api'],
    ['Hello World!', 'hello-world'],
    ['snake_case__name', 'snake-case-name'],
    ['dash - and -- dashes', 'dash-and-dashes'],
    ["What's up? (v2.0) #1", 'whats-up-v20-1'],
    ['Email@Home', 'email-at-home'],
    ['me @ work', 'me-at-work'],
    ['Crème Brûlée', 'creme-brulee'],
    ['Ærøskøbing', 'aeroskobing'],
    ['Straße', 'strasse'],
    ['Łódź', 'lodz'],
    ['Ça va, Señor Müller?', 'ca-va-senor-muller'],
    ['Ελληνικά', 'ellinika'],
    ['Привет мир', 'privet-mir'],
    ['Tab\tand\nnewline', 'tab-and-newline'],
    ['non\u00a0breaking\u3000spaces', 'non-breaking-spaces'],
    ['ﬁle №5 ½', 'file-no5-12'],
    ['100%', '100'],
    ['UPPER lower MiXeD', 'upper-lower-mixed'],
    ['-leading and trailing-', 'leading-and-trailing'],
  ])('%j -> %s', (name, slug) => {
    expect(slugify(name)).toBe(slug);
  });

  it.each(['!!!', '   ', '中文', '🚀🚀', '---', '___'])('falls back to "project" for %j, which leaves nothing', (name) => {
    expect(slugify(name)).toBe(EMPTY_SLUG);
  });

  it('caps a slug at 250 characters without a trailing dash', () => {
    expect(slugify('a'.repeat(300))).toBe('a'.repeat(MAX_SLUG_LENGTH));
    expect(slugify(`${'a'.repeat(249)} b`)).toBe('a'.repeat(249));
  });
});

describe('transliterate', () => {
  it('drops characters with no ASCII form and keeps ASCII as is', () => {
    expect(transliterate('abc 中 def')).toBe('abc  def');
    expect(transliterate('#@!_')).toBe('#@!_');
  });

  it('keeps the case of what it transliterates', () => {
    expect(transliterate('Жизнь Ærø Straße')).toBe('Zhizn Aero Strasse');
  });
});

describe('slugCandidate', () => {
  it('is the base first, then the base with -1, -2, ...', () => {
    expect([0, 1, 2, 10].map((n) => slugCandidate('backend-api', n))).toEqual(['backend-api', 'backend-api-1', 'backend-api-2', 'backend-api-10']);
  });

  it('shortens a long base so the suffix fits, never leaving a double dash', () => {
    const base = `${'a'.repeat(247)}-bc`;
    expect(slugCandidate(base, 1)).toBe(`${'a'.repeat(247)}-1`);
    expect(slugCandidate(base, 12)).toHaveLength(250);
    expect(slugCandidate(base, 12)).toBe(`${'a'.repeat(247)}-12`);
  });

  it('has candidates that all start with the prefix used to find taken slugs', () => {
    for (const base of ['backend-api', `${'a'.repeat(232)}-${'b'.repeat(17)}`, 'x'.repeat(250)]) {
      const prefix = slugCandidatePrefix(base);
      for (const n of [0, 1, 9, 10, 99, 12345, 9_007_199_254_740_991]) expect(slugCandidate(base, n).startsWith(prefix)).toBe(true);
    }
  });
});
