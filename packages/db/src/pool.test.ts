import { isUniqueViolation, sessionOptions, timestamp } from './pool';

describe('timestamp', () => {
  it('formats a column in SQL as UTC with six fractional digits, named after the column', () => {
    expect(timestamp('p.created_at')).toBe(`to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at`);
    expect(timestamp('updated_at', 'changed_at')).toMatch(/ AS changed_at$/);
  });
});

describe('isUniqueViolation', () => {
  it('recognises PostgreSQL unique violations, optionally of one constraint', () => {
    const error = { code: '23505', constraint: 'projects_organization_id_slug_key' };
    expect(isUniqueViolation(error)).toBe(true);
    expect(isUniqueViolation(error, 'projects_organization_id_slug_key')).toBe(true);
    expect(isUniqueViolation(error, 'other')).toBe(false);
    expect(isUniqueViolation({ code: '23503' })).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});

describe('sessionOptions', () => {
  it('puts the search path first, then the session defaults, then the settings given (which win)', () => {
    expect(sessionOptions('issue')).toBe('-c search_path=issue -c jit=off');
    expect(sessionOptions('delivery', { synchronous_commit: 'off' })).toBe('-c search_path=delivery -c jit=off -c synchronous_commit=off');
    expect(sessionOptions('delivery', { jit: 'on' })).toBe('-c search_path=delivery -c jit=on');
  });
});
