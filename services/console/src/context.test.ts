import { formList, formString, safeNext } from './context';
import { fieldErrors, mapLimit } from './routes/api-calls';

describe('safeNext', () => {
  it('accepts paths of this site only', () => {
    expect(safeNext('/teams/1/settings/webhooks')).toBe('/teams/1/settings/webhooks');
    expect(safeNext('/teams/1?notice=x')).toBe('/teams/1?notice=x');
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example', 'teams/1', '/teams/1"><script>', '', undefined, ['/teams/1']]) {
      expect(safeNext(bad)).toBeUndefined();
    }
  });
});

describe('form fields', () => {
  it('reads single values and repeated checkboxes, ignoring anything else', () => {
    expect(formString({ name: 'x' }, 'name')).toBe('x');
    expect(formString({ name: ['x', 'y'] }, 'name')).toBe('');
    expect(formString(undefined, 'name')).toBe('');
    expect(formList({ events: 'issue.created' }, 'events')).toEqual(['issue.created']);
    expect(formList({ events: ['issue.created', 'issue.updated'] }, 'events')).toEqual(['issue.created', 'issue.updated']);
    expect(formList({}, 'events')).toEqual([]);
  });
});

describe('fieldErrors', () => {
  it('files messages of array items under their field', () => {
    expect(
      fieldErrors({
        message: 'x',
        errors: { url: ['Bad url.'], 'events.1': ['The selected events is invalid.'], 'events.0': ['The selected events is invalid.'] },
      }),
    ).toEqual({ url: ['Bad url.'], events: ['The selected events is invalid.'] });
    expect(fieldErrors(undefined)).toEqual({});
  });
});

describe('mapLimit', () => {
  it('keeps the order of results and never runs more than the limit at once', async () => {
    let running = 0;
    let peak = 0;
    const results = await mapLimit([5, 1, 4, 2, 3], 2, async (value) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      return value * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30]);
    expect(peak).toBe(2);
  });
});
