import { HttpError } from './errors';
import { FieldErrorCollector } from './field-errors';
import { collectTextProblems, requireStorableText, textProblem } from './text-input';

const problems = (value: unknown) => {
  const collector = new FieldErrorCollector();
  collectTextProblems(value, collector);
  return { errors: { ...collector.errors }, omitted: collector.omitted };
};

describe('textProblem', () => {
  it('refuses U+0000 and lone surrogates, and accepts every other character', () => {
    expect(textProblem('a\u0000b')).toMatch(/NUL character \(U\+0000\)/);
    expect(textProblem('\ud800')).toMatch(/valid Unicode/);
    expect(textProblem('x\udc00')).toMatch(/valid Unicode/);
    expect(textProblem('emoji 😀, controls \u0001\u001f\t\n, é, \u2028')).toBeUndefined();
  });
});

describe('collectTextProblems', () => {
  it('names top-level fields, nested fields, array items and keys', () => {
    const body = { title: 'a\u0000', nested: { deep: ['ok', 'b\u0000'] }, ['ke\u0000y']: 'fine', clean: 'yes' };
    expect(problems(body).errors).toEqual({
      title: ['The title field must not contain the NUL character (U+0000).'],
      'nested.deep.1': ['The nested.deep.1 field must not contain the NUL character (U+0000).'],
      'ke\u0000y': ['The field name ke\u0000y must not contain the NUL character (U+0000).'],
    });
  });

  it('finds nothing in clean input of any shape', () => {
    for (const value of [{}, [], 'text', 1, null, true, { a: [{ b: 'c' }] }]) expect(problems(value).errors).toEqual({});
  });

  it('walks bodies nested far deeper than the call stack would allow', () => {
    let body: unknown = '\u0000';
    for (let depth = 0; depth < 200_000; depth++) body = [body];
    const found = problems(body);
    const [field] = Object.keys(found.errors);
    expect(field!.length).toBeLessThanOrEqual(100);
  });

  it('reports at most its limit however many strings are bad, counting the rest', () => {
    const found = problems({ items: Array.from({ length: 50_000 }, () => '\u0000') });
    expect(Object.keys(found.errors)).toHaveLength(1_000);
    expect(found.omitted).toBe(49_000);
  });
});

describe('requireStorableText', () => {
  it('throws a 422 naming the field', () => {
    const error = (() => {
      try {
        requireStorableText({ description: 'x\u0000' });
      } catch (caught) {
        return caught as HttpError;
      }
      return undefined;
    })();
    expect(error?.status).toBe(422);
    expect(error?.errors).toEqual({ description: ['The description field must not contain the NUL character (U+0000).'] });
    expect(() => requireStorableText({ description: 'x' })).not.toThrow();
  });
});
