import { HttpError, parseBody } from '@worklane/http';
import { createIssueSchema, diffIssue, isCalendarDate, newIssueValues, referenceCode, updateIssueSchema } from './issue';

const errorsOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, errors: error.errors };
    throw error;
  }
  throw new Error('expected a validation error');
};

describe('issue fields', () => {
  it('requires a title on create and applies the documented defaults', () => {
    expect(errorsOf(() => parseBody(createIssueSchema, {}))).toEqual({ status: 422, errors: { title: ['The title field is required.'] } });
    expect(newIssueValues(parseBody(createIssueSchema, { title: '  Login fails  ' }))).toEqual({
      title: 'Login fails',
      description: null,
      url: null,
      type: 'task',
      status: 'triage',
      priority: 'none',
      assigned_to: null,
      estimated_date: null,
    });
  });

  it('refuses unknown enum values, wrong types and impossible dates with per-field messages', () => {
    const result = errorsOf(() =>
      parseBody(createIssueSchema, { title: 'x', type: 'epic', status: 'open', priority: 3, estimated_date: '2026-02-30', assigned_to: '7', url: 'ftp://x' }),
    );
    expect(result.status).toBe(422);
    expect(Object.keys(result.errors ?? {}).sort()).toEqual(['assigned_to', 'estimated_date', 'priority', 'status', 'type', 'url']);
    expect(result.errors?.estimated_date).toEqual(['The estimated date field must be a valid date in YYYY-MM-DD form.']);
  });

  it('ignores server-owned fields and does not let PATCH null the title', () => {
    const parsed = parseBody(createIssueSchema, { title: 'x', id: 9, number: 4, reference_code: 'HACK-1', created_by: 99 });
    expect(parsed).toEqual({ title: 'x' });
    expect(errorsOf(() => parseBody(updateIssueSchema, { title: null })).errors).toEqual({ title: ['The title field must not be null.'] });
  });

  it('accepts real calendar dates only', () => {
    expect(isCalendarDate('2028-02-29')).toBe(true);
    expect(isCalendarDate('2026-02-29')).toBe(false);
    expect(isCalendarDate('2026-1-01')).toBe(false);
  });
});

describe('diffIssue', () => {
  const current = newIssueValues({ title: 'A', status: 'todo' });

  it('lists only the fields whose value changes, with from and to', () => {
    expect(diffIssue(current, { title: 'A', status: 'done', priority: 'none', description: 'new' })).toEqual({
      status: { from: 'todo', to: 'done' },
      description: { from: null, to: 'new' },
    });
  });

  it('is empty when nothing changes, so no issue.updated fires', () => {
    expect(diffIssue(current, { title: 'A', status: 'todo' })).toEqual({});
    expect(diffIssue(current, {})).toEqual({});
  });
});

describe('referenceCode', () => {
  it('upper-cases the project name, drops non-alphanumerics and appends the number', () => {
    expect(referenceCode('Backend API', 1)).toBe('BACKENDAPI-1');
    expect(referenceCode('web-app v2.0', 12)).toBe('WEBAPPV20-12');
    expect(referenceCode('---', 3)).toBe('ISSUE-3');
  });
});
