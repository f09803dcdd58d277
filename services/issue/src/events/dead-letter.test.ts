import { JetStreamApiError } from '@worklane/messaging';
import { HEADER_ALLOWANCE_BYTES, checkBeforePublish, deadLetterNotice, permanentFailure, readEvent } from './dead-letter';

const MIB = 1024 * 1024;
const envelope = (description: string) =>
  JSON.stringify({
    id: '6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11',
    event: 'issue.updated',
    created_at: '2026-11-23T21:00:00.000000Z',
    team_id: 7,
    issue: { id: 42, project_id: 3, number: 5, reference_code: 'API-5', title: 'Big', description },
    changes: { description: { from: null, to: description } },
  });

describe('dead letters', () => {
  it('knows before publishing that an event is larger than max_payload allows, headers included', () => {
    const big = envelope('\u0001'.repeat(100_000));
    expect(Buffer.byteLength(big)).toBeGreaterThan(MIB);
    expect(checkBeforePublish(big, readEvent(big), MIB)).toMatchObject({ reason: 'payload_too_large' });
    const small = envelope('fine');
    expect(checkBeforePublish(small, readEvent(small), MIB)).toBeUndefined();
    const edge = 'x'.repeat(MIB - HEADER_ALLOWANCE_BYTES + 1);
    expect(checkBeforePublish(edge, undefined, MIB)).toMatchObject({ reason: 'payload_too_large' });
  });

  it('calls a payload that is not an issue event invalid', () => {
    for (const payload of ['not json', 'null', '{"id":"x"}', JSON.stringify({ id: 'a', event: 'issue.created', created_at: 'now', team_id: '7', issue: { id: 1 } })]) {
      expect(checkBeforePublish(payload, readEvent(payload), MIB)).toMatchObject({ reason: 'invalid_event' });
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

  it('writes a small notice with the event\'s identity and the reason, whatever the event held', () => {
    const big = envelope('\u0001'.repeat(200_000));
    const notice = JSON.parse(deadLetterNotice(readEvent(big)!, { reason: 'payload_too_large', detail: 'too big' }, Buffer.byteLength(big)));
    expect(notice).toEqual({
      id: '6f1c1d2e-6a43-4a38-9d3c-3c1f0a8c2b11',
      event: 'issue.updated',
      created_at: '2026-11-23T21:00:00.000000Z',
      team_id: 7,
      issue: { id: 42, project_id: 3, number: 5, reference_code: 'API-5' },
      dead_letter: { reason: 'payload_too_large', detail: 'too big', size_bytes: Buffer.byteLength(big) },
    });
    expect(JSON.stringify(notice).length).toBeLessThan(512);
  });
});
