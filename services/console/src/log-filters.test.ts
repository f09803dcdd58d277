import { filterQueryString, localValue, readLogFilters, utcInstant } from './log-filters';

describe('delivery log filters', () => {
  it('passes valid filters on as the API takes them', () => {
    const { query, errors, values } = readLogFilters({
      status: 'failed',
      event: 'webhook.disabled',
      issue_id: '42',
      event_id: '5A1F3C2E-8B7D-5E4F-9A0B-1C2D3E4F5A6B',
      created_after: '2026-01-15T08:00',
      created_before: '2026-01-15T09:30:15',
    });
    expect(errors).toEqual({});
    expect(query).toEqual({
      status: 'failed',
      event: 'webhook.disabled',
      issue_id: 42,
      event_id: '5a1f3c2e-8b7d-5e4f-9a0b-1c2d3e4f5a6b',
      created_after: '2026-01-15T08:00:00Z',
      created_before: '2026-01-15T09:30:15Z',
    });
    expect(values.created_after).toBe('2026-01-15T08:00');
  });

  it('keeps what is not valid out of the query and says why, field by field', () => {
    const { query, errors } = readLogFilters({
      status: 'lost',
      event: 'issue.deleted',
      issue_id: '-1',
      event_id: 'abc',
      created_after: '2026-02-30T10:00',
      created_before: ['a', 'b'],
    });
    expect(query).toEqual({});
    expect(Object.keys(errors).sort()).toEqual(['created_after', 'event', 'event_id', 'issue_id', 'status']);
  });

  it('reads datetime-local values as UTC and refuses days that do not exist', () => {
    expect(utcInstant('2026-12-31T23:59')).toBe('2026-12-31T23:59:00Z');
    expect(utcInstant('2026-12-31T23:59:59.5')).toBe('2026-12-31T23:59:59Z');
    expect(utcInstant('2026-02-29T00:00')).toBeUndefined();
    expect(utcInstant('2026-01-15 08:00')).toBeUndefined();
    expect(utcInstant('')).toBeUndefined();
    expect(localValue(new Date('2026-01-15T08:00:00.123Z'))).toBe('2026-01-15T08:00:00');
  });

  it('carries the filters in force to the next page, encoded', () => {
    const { values } = readLogFilters({ status: 'failed', event_id: '', created_after: '2026-01-15T08:00' });
    expect(filterQueryString(values)).toBe('&status=failed&created_after=2026-01-15T08%3A00');
    expect(filterQueryString(readLogFilters({}).values)).toBe('');
  });
});
