import { deliveryId, parseEventHeader } from './delivery';

describe('deliveryId', () => {
  const event = '1b4e28ba-2fa1-4d2b-883f-0016d3cca427';

  it('is the same for the same event and webhook, whoever computes it', () => {
    expect(deliveryId(event, 7)).toBe(deliveryId(event.toUpperCase(), 7));
  });

  it('differs between webhooks and between events', () => {
    expect(deliveryId(event, 7)).not.toBe(deliveryId(event, 8));
    expect(deliveryId(event, 7)).not.toBe(deliveryId('2b4e28ba-2fa1-4d2b-883f-0016d3cca427', 7));
  });

  it('is a well-formed version 5 UUID', () => {
    expect(deliveryId(event, 7)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('parseEventHeader', () => {
  const valid = { id: '1b4e28ba-2fa1-4d2b-883f-0016d3cca427', event: 'issue.created', created_at: '2026-01-15T09:00:00.123456Z', team_id: 3, issue: {} };
  const bytes = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

  it('reads the fields the fan-out needs', () => {
    expect(parseEventHeader(bytes(valid))).toEqual({ id: valid.id, event: 'issue.created', created_at: valid.created_at, team_id: 3 });
  });

  it('rejects what retrying would not fix: bad JSON, unknown events, missing or malformed fields', () => {
    expect(parseEventHeader(bytes('{'))).toBeUndefined();
    expect(parseEventHeader(bytes({ ...valid, event: 'issue.deleted' }))).toBeUndefined();
    expect(parseEventHeader(bytes({ ...valid, team_id: '3' }))).toBeUndefined();
    expect(parseEventHeader(bytes({ ...valid, id: 'x' }))).toBeUndefined();
    expect(parseEventHeader(bytes({ ...valid, created_at: 'yesterday' }))).toBeUndefined();
  });
});
