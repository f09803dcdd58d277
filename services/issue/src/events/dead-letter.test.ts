import { JetStreamApiError, readDeadLetterNotice, readIssueEvent } from '@worklane/messaging';
import { HEADER_ALLOWANCE_BYTES, moveToDeadLetters, permanentFailure, prepareMessage } from './dead-letter';

const MIB = 1024 * 1024;

/** An outbox row as the issue service's statement writes it: the event in the flat form. */
const outboxPayload = (description: string) =>
  JSON.stringify({
    id: '6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11',
    event: 'issue.updated',
    created_at: '2026-11-23T21:00:00.000000Z',
    team_id: 7,
    issue: {
      id: 42,
      project_id: 3,
      number: 5,
      reference_code: 'API-5',
      title: 'Big',
      description,
      url: null,
      type: 'bug',
      status: 'todo',
      priority: 'none',
      assigned_to: null,
      estimated_date: null,
      created_by: 1,
      created_at: '2026-11-23T20:00:00.000000Z',
      updated_at: '2026-11-23T21:00:00.000000Z',
    },
    changes: { description: { from: null, to: description } },
  });

describe('dead letters', () => {
  it('publishes an outbox row as its envelope', () => {
    const prepared = prepareMessage(outboxPayload('fine'), MIB);
    expect('message' in prepared).toBe(true);
    if (!('message' in prepared)) return;
    expect(JSON.parse(prepared.message)).toMatchObject({ id: '6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11', type: 'issue.updated', version: 1, team_id: 7, data: { issue: { id: 42 } } });
    expect(readIssueEvent(prepared.message)).toMatchObject({ ok: true, form: 'envelope', event: prepared.event });
  });

  it('knows before publishing that a message is larger than max_payload allows, headers included', () => {
    const big = outboxPayload('\u0001'.repeat(100_000));
    expect(Buffer.byteLength(big)).toBeGreaterThan(MIB);
    const refused = prepareMessage(big, MIB);
    expect(refused).toMatchObject({ failure: { reason: 'payload_too_large' }, event: { id: '6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11' } });
    const edge = 'x'.repeat(MIB - HEADER_ALLOWANCE_BYTES + 1);
    expect(prepareMessage(edge, MIB)).toMatchObject({ failure: { reason: 'payload_too_large' } });
  });

  it('calls a payload that is not an issue event invalid, and says why', () => {
    const incomplete = JSON.stringify({
      id: '6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11',
      event: 'issue.created',
      created_at: '2026-11-23T21:00:00.000000Z',
      team_id: 7,
      issue: { id: 1 },
    });
    for (const payload of ['not json', 'null', '{"id":"x"}', JSON.stringify({ id: 'a', event: 'issue.created', created_at: 'now', team_id: '7', issue: { id: 1 } }), incomplete]) {
      const prepared = prepareMessage(payload, MIB);
      expect(prepared).toMatchObject({ failure: { reason: 'invalid_event', detail: expect.stringMatching(/^the outbox payload is not an issue event: .+/) } });
      expect('event' in prepared && prepared.event).toBeFalsy();
    }
  });

  it('tells permanent publish errors from transient ones', () => {
    const apiError = (code: number, description: string) => new JetStreamApiError({ code: 503, err_code: code, description });
    expect(permanentFailure(apiError(10054, 'message size exceeds maximum allowed'))).toMatchObject({ reason: 'payload_too_large' });
    const clientRefusal = Object.assign(new Error("'payload' max_payload size exceeded"), { name: 'InvalidArgumentError' });
    expect(permanentFailure(clientRefusal)).toMatchObject({ reason: 'payload_too_large' });
    // A full stream, a missing stream, a timeout, a lost connection: retried, never dead-lettered.
    expect(permanentFailure(apiError(10077, 'maximum bytes exceeded'))).toBeUndefined();
    expect(permanentFailure(apiError(10059, 'stream not found'))).toBeUndefined();
    expect(permanentFailure(Object.assign(new Error('timeout'), { name: 'TimeoutError' }))).toBeUndefined();
    expect(permanentFailure(new Error('connection closed'))).toBeUndefined();
  });

  it("puts a small notice with the event's identity and the reason in the event's place, whatever the event held", async () => {
    const big = outboxPayload('\u0001'.repeat(200_000));
    const prepared = prepareMessage(big, MIB);
    if ('message' in prepared) throw new Error('expected a refusal');
    const queries: { values: unknown[] }[] = [];
    const client = { query: (query: { values: unknown[] }) => queries.push(query) } as unknown as Parameters<typeof moveToDeadLetters>[0];
    const notice = await moveToDeadLetters(client, { id: '6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11', payload: big }, prepared.event, prepared.failure);
    const read = readDeadLetterNotice(notice!);
    expect(read).toMatchObject({ ok: true, form: 'envelope' });
    expect(read.ok && read.event).toEqual({
      id: '6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11',
      type: 'issue.updated',
      version: 1,
      occurred_at: '2026-11-23T21:00:00.000000Z',
      team_id: 7,
      data: {
        issue: { id: 42, project_id: 3, number: 5, reference_code: 'API-5' },
        dead_letter: { reason: 'payload_too_large', detail: prepared.failure.detail, size_bytes: prepared.failure.sizeBytes },
      },
    });
    expect(prepared.failure.sizeBytes).toBeGreaterThan(Buffer.byteLength(big));
    expect(notice!.length).toBeLessThan(512);
    // The row keeps its id and place; the notice and the team go with it.
    expect(queries[0]!.values).toEqual(['6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11', 7, 'payload_too_large', prepared.failure.detail, notice, 'issues.dead_lettered']);
  });
});
