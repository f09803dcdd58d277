import { createIssueEvent, encodeEvent } from '@worklane/messaging';
import { EDITABLE_FIELDS, ISSUE_PRIORITIES, ISSUE_STATUSES, ISSUE_TYPES, ISSUE_TEXT_LIMITS, createIssueSchema, type Issue } from './issue';

/** NATS's default (and Worklane's) max_payload: headers and body of one message together. */
const MAX_PAYLOAD = 1024 * 1024;
/** Room kept for the message headers (Nats-Msg-Id, traceparent, tracestate) and for growth. */
const HEADROOM = 256 * 1024;

// JSON spends the most bytes on a control character: "\u0001" is 6 bytes for one character.
const worstText = (length: number, fill = '\u0001') => fill.repeat(Math.ceil(length / fill.length)).slice(0, length);
const longest = (values: readonly string[]) => values.reduce((a, b) => (b.length > a.length ? b : a));
const BIGGEST_ID = Number.MAX_SAFE_INTEGER;
const PROJECT_NAME_MAX = 255;

/** The largest issue the API can hold, every text at its limit and made of the costliest characters. */
function largestIssue(fill: string): Issue {
  return {
    id: BIGGEST_ID,
    project_id: BIGGEST_ID,
    number: BIGGEST_ID,
    // Upper-casing can turn one character of the project's name into three ("ﬃ" -> "FFI").
    reference_code: `${worstText(PROJECT_NAME_MAX * 3, fill)}-${BIGGEST_ID}`,
    title: worstText(ISSUE_TEXT_LIMITS.title, fill),
    description: worstText(ISSUE_TEXT_LIMITS.description, fill),
    url: worstText(ISSUE_TEXT_LIMITS.url, fill),
    type: longest(ISSUE_TYPES) as Issue['type'],
    status: longest(ISSUE_STATUSES) as Issue['status'],
    priority: longest(ISSUE_PRIORITIES) as Issue['priority'],
    assigned_to: BIGGEST_ID,
    estimated_date: '9999-12-31',
    created_by: BIGGEST_ID,
    created_at: '2026-11-23T21:50:00.123456Z',
    updated_at: '2026-11-23T21:50:00.123456Z',
  };
}

/** issue.updated where every editable field changed from one worst value to another, as the bus carries it. */
function largestUpdatedEvent(before: Issue, after: Issue): string {
  const changes = Object.fromEntries(EDITABLE_FIELDS.map((field) => [field, { from: before[field], to: after[field] }]));
  const event = createIssueEvent({
    id: '00000000-0000-4000-8000-000000000000',
    type: 'issue.updated',
    occurred_at: after.updated_at,
    team_id: BIGGEST_ID,
    data: { issue: { ...after }, changes },
  });
  // Compact JSON, as the relay publishes it (the outbox's flat form is a few bytes smaller).
  return encodeEvent(event);
}

describe('the largest possible issue event', () => {
  it('stays well under the bus’s max_payload, by the field limits alone', () => {
    const body = largestUpdatedEvent(largestIssue('\u0001'), largestIssue('\u001f'));
    const bytes = Buffer.byteLength(body);
    expect(bytes).toBeGreaterThan(3 * 6 * ISSUE_TEXT_LIMITS.description);
    expect(bytes).toBeLessThan(MAX_PAYLOAD - HEADROOM);
  });

  it('stays under it with characters of any other kind too (quotes, 3- and 4-byte UTF-8)', () => {
    for (const fill of ['"', '\\', '\u2028', '\uffff', '😀']) {
      const bytes = Buffer.byteLength(largestUpdatedEvent(largestIssue(fill), largestIssue(fill)));
      expect(bytes).toBeLessThan(MAX_PAYLOAD - HEADROOM);
    }
  });

  it('is built from limits the API enforces', () => {
    const atLimit = {
      title: 't'.repeat(ISSUE_TEXT_LIMITS.title),
      description: 'd'.repeat(ISSUE_TEXT_LIMITS.description),
      url: `https://example.com/${'u'.repeat(ISSUE_TEXT_LIMITS.url - 20)}`,
    };
    expect(createIssueSchema.safeParse(atLimit).success).toBe(true);
    for (const field of ['title', 'description', 'url'] as const) {
      const tooLong = { ...atLimit, [field]: `${atLimit[field]}x` };
      expect(createIssueSchema.safeParse(tooLong).success).toBe(false);
    }
  });
});
