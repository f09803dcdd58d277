import { AckPolicy } from '@nats-io/jetstream';
import { ISSUE_EVENTS_DEAD_LETTER_SUBJECT, ISSUE_EVENT_SUBJECTS } from './event-subjects';
import { ISSUE_EVENTS_STREAM_CONFIG, deliveryConsumerConfig } from './issue-events';

describe('ISSUE_EVENTS declarations', () => {
  it('carries issues.created, issues.updated and dead-letter notices with duplicate detection on Nats-Msg-Id', () => {
    expect(ISSUE_EVENTS_STREAM_CONFIG.name).toBe('ISSUE_EVENTS');
    expect(ISSUE_EVENTS_STREAM_CONFIG.subjects).toEqual(['issues.created', 'issues.updated', ISSUE_EVENTS_DEAD_LETTER_SUBJECT]);
    expect(ISSUE_EVENT_SUBJECTS['issue.updated']).toBe('issues.updated');
    expect(ISSUE_EVENTS_STREAM_CONFIG.duplicate_window).toBeGreaterThan(0);
    expect(ISSUE_EVENTS_STREAM_CONFIG).toMatchObject({ retention: 'interest', discard: 'new' });
  });

  it('declares a durable consumer that needs explicit acks and never gives up on an event', () => {
    const config = deliveryConsumerConfig({ ackWaitMs: 3_000 });
    expect(config).toMatchObject({ durable_name: 'delivery', ack_policy: AckPolicy.Explicit, max_deliver: -1, ack_wait: 3_000_000_000 });
    expect(config.filter_subjects).toContain(ISSUE_EVENTS_DEAD_LETTER_SUBJECT);
  });
});
