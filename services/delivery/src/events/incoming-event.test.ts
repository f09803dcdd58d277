import { readIncomingEvent } from './incoming-event';

const issue = {
  id: 42,
  project_id: 7,
  number: 12,
  reference_code: 'BACKENDAPI-12',
  title: 'Checkout fails on Safari',
  description: null,
  url: null,
  type: 'bug',
  status: 'triage',
  priority: 'high',
  assigned_to: null,
  estimated_date: null,
  created_by: 1,
  created_at: '2026-01-15T09:00:00.123456Z',
  updated_at: '2026-01-15T09:00:00.123456Z',
};
const envelope = { id: '1b4e28ba-2fa1-4d2b-883f-0016d3cca427', type: 'issue.created', version: 1, occurred_at: '2026-01-15T09:00:00.123456Z', team_id: 3, data: { issue } };
const bytes = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
/** The webhook body receivers have always had, and the format the bus carried before the envelope. */
const flatBody = JSON.stringify({ id: envelope.id, event: 'issue.created', created_at: envelope.occurred_at, team_id: 3, issue });

describe('readIncomingEvent', () => {
  it('reads the fields the fan-out needs and delivers the webhook body receivers always had', () => {
    const incoming = readIncomingEvent('issues.created', bytes(envelope));
    expect(incoming).toEqual({
      kind: 'event',
      header: { id: envelope.id, event: 'issue.created', created_at: envelope.occurred_at, team_id: 3, project_id: 7, issue_id: 42 },
      body: Buffer.from(flatBody),
      form: 'envelope',
    });
  });

  it('reads the organization of the envelope (or, from a relay of the previous release, of data), never putting it in the body', () => {
    const withOrganization = readIncomingEvent('issues.created', bytes({ ...envelope, organization_id: 5 }));
    expect(withOrganization).toMatchObject({ kind: 'event', header: { organization_id: 5, project_id: 7, issue_id: 42 }, body: Buffer.from(flatBody) });
    const relayedByPrevious = readIncomingEvent('issues.created', bytes({ ...envelope, data: { issue, organization_id: 6 } }));
    expect(relayedByPrevious).toMatchObject({ kind: 'event', header: { organization_id: 6 }, body: Buffer.from(flatBody) });
    const notice = { ...envelope, organization_id: 5, data: { issue: { id: 42, project_id: 7 }, dead_letter: { reason: 'payload_too_large', detail: 'big', size_bytes: 1 } } };
    expect(readIncomingEvent('issues.dead_lettered', bytes(notice))).toMatchObject({ kind: 'notice', header: { organization_id: 5, project_id: 7, issue_id: 42 } });
  });

  it('takes a message in the format published before the envelope, and delivers it unchanged', () => {
    const incoming = readIncomingEvent('issues.created', bytes(flatBody));
    expect(incoming).toMatchObject({ kind: 'event', form: 'flat', header: { id: envelope.id, team_id: 3 } });
    expect(incoming.kind !== 'invalid' && incoming.body.toString()).toBe(flatBody);
  });

  it('reads a dead-letter notice into the delivery log payload of before', () => {
    const notice = { ...envelope, type: 'issue.updated', data: { issue: { id: 42 }, dead_letter: { reason: 'payload_too_large', detail: 'big', size_bytes: 2_000_000 } } };
    const incoming = readIncomingEvent('issues.dead_lettered', bytes(notice));
    expect(incoming).toMatchObject({ kind: 'notice', header: { event: 'issue.updated' } });
    expect(incoming.kind !== 'invalid' && JSON.parse(incoming.body.toString())).toEqual({
      id: envelope.id,
      event: 'issue.updated',
      created_at: envelope.occurred_at,
      team_id: 3,
      issue: { id: 42 },
      dead_letter: notice.data.dead_letter,
    });
  });

  it('calls invalid what retrying would not fix: bad JSON, unknown types or versions, missing or malformed fields', () => {
    for (const message of [
      '{',
      { ...envelope, type: 'issue.deleted' },
      { ...envelope, version: 2 },
      { ...envelope, team_id: '3' },
      { ...envelope, id: 'x' },
      { ...envelope, occurred_at: 'yesterday' },
      { ...envelope, data: {} },
    ]) {
      expect(readIncomingEvent('issues.created', bytes(message))).toMatchObject({ kind: 'invalid', problem: expect.any(String) });
    }
    // An event is not a notice.
    expect(readIncomingEvent('issues.dead_lettered', bytes(envelope))).toMatchObject({ kind: 'invalid' });
  });
});
