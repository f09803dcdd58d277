import { HttpError, validationFailed } from './errors';
import { boundFieldErrors, FieldErrorCollector, truncateText } from './field-errors';

describe('truncateText', () => {
  it('keeps short text and cuts long text to the limit, marked with an ellipsis', () => {
    expect(truncateText('short', 10)).toBe('short');
    const cut = truncateText('x'.repeat(50), 10);
    expect(cut).toHaveLength(10);
    expect(cut.endsWith('…')).toBe(true);
  });
});

describe('boundFieldErrors', () => {
  it('lists the first messages up to the limit and counts the rest', () => {
    const errors = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`items.${index}`, [`The items.${index} field is invalid.`]]));
    const bounded = boundFieldErrors(errors, { maxFieldErrors: 20, maxMessageLength: 300 });
    expect(Object.keys(bounded.errors)).toHaveLength(20);
    expect(Object.keys(bounded.errors)[0]).toBe('items.0');
    expect(bounded.omitted).toBe(10);
  });

  it('cuts each message to the maximum length', () => {
    const bounded = boundFieldErrors({ name: ['y'.repeat(10_000)] }, { maxFieldErrors: 20, maxMessageLength: 300 });
    expect(bounded.errors.name![0]).toHaveLength(300);
  });
});

describe('FieldErrorCollector', () => {
  it('keeps distinct messages up to its limit and counts what it leaves out', () => {
    const collector = new FieldErrorCollector(3);
    collector.add('a', 'one');
    collector.add('a', 'one');
    collector.add('b', 'two');
    collector.add('c', 'three');
    collector.add('d', 'four');
    collector.add('e', 'five');
    expect(collector.errors).toEqual({ a: ['one'], b: ['two'], c: ['three'] });
    expect(collector.omitted).toBe(2);
  });

  it('takes any name a client chooses, __proto__ included, bounded in length', () => {
    const collector = new FieldErrorCollector();
    collector.add('__proto__', 'bad');
    collector.add('k'.repeat(5_000), 'long');
    expect(JSON.parse(JSON.stringify(collector.errors))).toEqual({ ['__proto__']: ['bad'], [`${'k'.repeat(99)}…`]: ['long'] });
  });
});

describe('a 422', () => {
  it('reports errors_omitted only when fields were left out, and renders within the limits', () => {
    expect(validationFailed({ name: ['The name field is required.'] }).body).toEqual({
      message: 'The name field is required.',
      code: 'validation_failed',
      errors: { name: ['The name field is required.'] },
    });
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`f${index}`, ['m'.repeat(1_000)]]));
    const error: HttpError = validationFailed(many, 7);
    const body = error.boundedBody({ maxFieldErrors: 20, maxMessageLength: 300 });
    expect(Object.keys(body.errors!)).toHaveLength(20);
    expect(body.errors_omitted).toBe(30 + 7);
    expect(body.message).toHaveLength(300);
  });
});
