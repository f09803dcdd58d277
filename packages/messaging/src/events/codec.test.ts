import { InvalidEventError, createIssueEvent, deadLetterNotice, encodeEvent, readDeadLetterNotice, readIssueEvent, toWebhookBody } from './codec';

/**
 * An issue.updated message exactly as the bus carried it before the envelope (and as the issue
 * service's outbox records events): PostgreSQL's row_to_json output, compact. Kept literal: a
 * consumer must go on reading what an earlier release left in the stream or in an outbox.
 */
const PREVIOUS_FORMAT_UPDATED =
  '{"id":"3a0c8a5e-2f4b-4d5c-9e1f-0a1b2c3d4e5f","event":"issue.updated","created_at":"2026-03-02T10:15:30.123456Z","team_id":17,' +
  '"issue":{"id":901,"project_id":44,"number":3,"reference_code":"BACKENDAPI-3","title":"Login fails","description":"Steps:\\n1. \\"Sign in\\"\\u0001",' +
  '"url":null,"type":"bug","status":"in_progress","priority":"urgent","assigned_to":5,"estimated_date":null,"created_by":5,' +
  '"created_at":"2026-03-01T08:00:00.000001Z","updated_at":"2026-03-02T10:15:30.123456Z"},' +
  '"changes":{"status":{"from":"todo","to":"in_progress"},"priority":{"from":"none","to":"urgent"}}}';

const PREVIOUS_FORMAT_NOTICE =
  '{"id":"6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f","event":"issue.created","created_at":"2026-03-02T10:15:31.000000Z","team_id":17,' +
  '"issue":{"id":902,"project_id":44,"number":4,"reference_code":"BACKENDAPI-4"},' +
  '"dead_letter":{"reason":"payload_too_large","detail":"event of 1258291 bytes exceeds the 1044480 bytes a message may carry","size_bytes":1258291}}';

const issue = {
  id: 901,
  project_id: 44,
  number: 3,
  reference_code: 'BACKENDAPI-3',
  title: 'Login fails',
  description: null,
  url: null,
  type: 'bug',
  status: 'todo',
  priority: 'none',
  assigned_to: null,
  estimated_date: null,
  created_by: 5,
  created_at: '2026-03-01T08:00:00.000001Z',
  updated_at: '2026-03-01T08:00:00.000001Z',
};

const created = () => createIssueEvent({ id: '0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b', type: 'issue.created', occurred_at: issue.created_at, team_id: 17, data: { issue } });

describe('the event envelope', () => {
  it('is built in the version published now and read back as it was written', () => {
    const event = created();
    expect(event).toEqual({ id: '0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b', type: 'issue.created', version: 1, occurred_at: issue.created_at, team_id: 17, data: { issue } });
    expect(Object.keys(JSON.parse(encodeEvent(event)))).toEqual(['id', 'type', 'version', 'occurred_at', 'team_id', 'data']);
    expect(readIssueEvent(Buffer.from(encodeEvent(event)))).toEqual({ ok: true, event, form: 'envelope' });
  });

  it('reads a message in the format the bus carried before the envelope, as version 1', () => {
    const read = readIssueEvent(Buffer.from(PREVIOUS_FORMAT_UPDATED));
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.form).toBe('flat');
    expect(read.event).toMatchObject({
      id: '3a0c8a5e-2f4b-4d5c-9e1f-0a1b2c3d4e5f',
      type: 'issue.updated',
      version: 1,
      occurred_at: '2026-03-02T10:15:30.123456Z',
      team_id: 17,
      data: { issue: { id: 901, description: 'Steps:\n1. "Sign in"\u0001' }, changes: { status: { from: 'todo', to: 'in_progress' } } },
    });
    // What receivers get is byte for byte what they got when the bus carried this format.
    expect(toWebhookBody(read.event)).toBe(PREVIOUS_FORMAT_UPDATED);
  });

  it('gives receivers the webhook body they always had, whatever the bus carries', () => {
    const envelope = readIssueEvent(PREVIOUS_FORMAT_UPDATED);
    if (!envelope.ok) throw new Error(envelope.problem);
    const reread = readIssueEvent(encodeEvent(envelope.event));
    expect(reread.ok && reread.form).toBe('envelope');
    expect(reread.ok && toWebhookBody(reread.event)).toBe(PREVIOUS_FORMAT_UPDATED);
    expect(Object.keys(JSON.parse(toWebhookBody(created())))).toEqual(['id', 'event', 'created_at', 'team_id', 'issue']);
  });

  it('carries the issue’s organization in the envelope (from the outbox’s record), not in the webhook body, and reads messages without it', () => {
    const flat = JSON.stringify({ id: '0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b', event: 'issue.created', created_at: issue.created_at, team_id: 17, organization_id: 4, issue });
    const read = readIssueEvent(flat);
    if (!read.ok) throw new Error(read.problem);
    expect(read.event.organization_id).toBe(4);
    expect(read.event.data).toEqual({ issue });
    expect(Object.keys(JSON.parse(encodeEvent(read.event)))).toEqual(['id', 'type', 'version', 'occurred_at', 'team_id', 'organization_id', 'data']);
    // Receivers get the body they always had.
    expect(toWebhookBody(read.event)).toBe(JSON.stringify({ id: read.event.id, event: 'issue.created', created_at: issue.created_at, team_id: 17, issue }));
    const built = createIssueEvent({ id: read.event.id, type: 'issue.created', occurred_at: issue.created_at, team_id: 17, organization_id: 4, data: { issue } });
    expect(built).toEqual(read.event);
    expect(deadLetterNotice(built, { reason: 'payload_too_large', detail: 'big', size_bytes: 1 }).organization_id).toBe(4);
    // Published before the field existed: read as before, without one.
    const older = readIssueEvent(PREVIOUS_FORMAT_UPDATED);
    expect(older.ok && older.event.organization_id).toBeUndefined();
    expect(readIssueEvent(JSON.stringify({ ...created(), organization_id: 'x' })).ok).toBe(false);
  });

  it('keeps fields it does not know (a producer may add optional ones inside a version) and passes them on', () => {
    const event = { ...created(), trace: 'x', data: { issue: { ...issue, labels: ['ui'] }, actor: { id: 5 } } };
    const read = readIssueEvent(JSON.stringify(event));
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.event).toMatchObject({ trace: 'x', data: { issue: { labels: ['ui'] }, actor: { id: 5 } } });
    expect(JSON.parse(toWebhookBody(read.event))).toMatchObject({ issue: { labels: ['ui'] }, actor: { id: 5 } });
    // An issue status the API adds later is relayed, not refused.
    expect(readIssueEvent(JSON.stringify({ ...created(), data: { issue: { ...issue, status: 'blocked' } } })).ok).toBe(true);
  });

  it('refuses what is not an event it knows, and says why', () => {
    const problem = (input: string) => {
      const read = readIssueEvent(input);
      return read.ok ? undefined : read.problem;
    };
    const valid = created();
    expect(problem('not json')).toBe('not a JSON object');
    expect(problem('[1]')).toBe('not a JSON object');
    expect(problem(JSON.stringify({ ...valid, type: 'issue.deleted' }))).toMatch(/unknown event type "issue.deleted"/);
    expect(problem(JSON.stringify({ ...valid, version: 2 }))).toMatch(/issue.created version 2 is not one this release reads \(it reads 1\)/);
    expect(problem(JSON.stringify({ ...valid, team_id: '17' }))).toMatch(/^team_id: /);
    expect(problem(JSON.stringify({ ...valid, id: 'x' }))).toMatch(/^id: /);
    expect(problem(JSON.stringify({ ...valid, data: { issue: { ...issue, id: undefined } } }))).toMatch(/^data\.issue\.id: /);
    expect(problem(JSON.stringify({ ...valid, type: 'issue.updated' }))).toMatch(/^data\.changes: /);
    expect(problem(JSON.stringify({ id: valid.id, event: 'issue.created', created_at: 'yesterday', team_id: 17, issue }))).toMatch(/^occurred_at: /);
    expect(() => createIssueEvent({ ...valid, team_id: 0 })).toThrow(InvalidEventError);
  });
});

describe('dead-letter notices', () => {
  it('keep the lost event’s envelope fields and the issue’s identifying fields only', () => {
    const event = createIssueEvent({
      id: '0e9d8c7b-6a5f-4e3d-8c2b-1a0f9e8d7c6b',
      type: 'issue.created',
      occurred_at: issue.created_at,
      team_id: 17,
      data: { issue: { ...issue, description: 'x'.repeat(10_000), reference_code: 'R'.repeat(65) } },
    });
    const notice = deadLetterNotice(event, { reason: 'payload_too_large', detail: 'too big', size_bytes: 2_000_000 });
    expect(notice).toEqual({
      id: event.id,
      type: 'issue.created',
      version: 1,
      occurred_at: event.occurred_at,
      team_id: 17,
      data: { issue: { id: 901, project_id: 44, number: 3 }, dead_letter: { reason: 'payload_too_large', detail: 'too big', size_bytes: 2_000_000 } },
    });
    expect(readDeadLetterNotice(encodeEvent(notice))).toEqual({ ok: true, event: notice, form: 'envelope' });
    expect(JSON.parse(toWebhookBody(notice))).toEqual({
      id: event.id,
      event: 'issue.created',
      created_at: event.occurred_at,
      team_id: 17,
      issue: { id: 901, project_id: 44, number: 3 },
      dead_letter: notice.data.dead_letter,
    });
  });

  it('are read in the format published before the envelope, and shown in the delivery log as before', () => {
    const read = readDeadLetterNotice(Buffer.from(PREVIOUS_FORMAT_NOTICE));
    expect(read.ok && read.form).toBe('flat');
    expect(read.ok && toWebhookBody(read.event)).toBe(PREVIOUS_FORMAT_NOTICE);
    expect(readDeadLetterNotice('{"id":"6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f","event":"issue.created"}').ok).toBe(false);
  });
});
