import { DiscardPolicy } from '@nats-io/jetstream';
import { streamLimitsFrom, strongerLimits, type StreamLimits } from './stream-limits';

const configured: StreamLimits = { num_replicas: 1, max_bytes: 1_000_000, max_msgs: 5_000, max_age: 3_600e9, discard: DiscardPolicy.New };

describe('strongerLimits', () => {
  it('applies configured limits that are at least as strong as the stream has', () => {
    const existing = { num_replicas: 1, max_bytes: 500_000, max_msgs: 1_000, max_age: 60e9, discard: DiscardPolicy.Old };
    expect(strongerLimits(existing, configured)).toEqual({ limits: configured, kept: [] });
  });

  it('keeps every stronger existing limit and reports it: replicas, sizes, age and discard new', () => {
    const existing = { num_replicas: 3, max_bytes: -1, max_msgs: 9_000, max_age: 0, discard: DiscardPolicy.New };
    const { limits, kept } = strongerLimits(existing, { ...configured, discard: DiscardPolicy.Old });
    expect(limits).toEqual({ num_replicas: 3, max_bytes: -1, max_msgs: 9_000, max_age: 0, discard: DiscardPolicy.New });
    expect(kept.map((entry) => entry.limit).sort()).toEqual(['discard', 'max_age', 'max_bytes', 'max_msgs', 'num_replicas']);
    expect(kept.find((entry) => entry.limit === 'num_replicas')).toEqual({ limit: 'num_replicas', existing: 3, configured: 1 });
  });

  it('reads the settings of the environment', () => {
    const limits = streamLimitsFrom({
      ISSUE_EVENTS_REPLICAS: 3,
      ISSUE_EVENTS_MAX_BYTES: 2_000_000,
      ISSUE_EVENTS_MAX_MSGS: 10_000,
      ISSUE_EVENTS_MAX_AGE_HOURS: 2,
      ISSUE_EVENTS_DISCARD: 'new',
    });
    expect(limits).toEqual({ num_replicas: 3, max_bytes: 2_000_000, max_msgs: 10_000, max_age: 7_200e9, discard: DiscardPolicy.New });
  });
});
