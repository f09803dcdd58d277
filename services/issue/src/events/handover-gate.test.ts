import { handOverWhileIdle, RecentLoopUtilization } from './handover-gate';

const relay = (ready = true) => ({ leaseSeconds: 15, ready: () => ready, publish: jest.fn() });

describe('handOverWhileIdle', () => {
  it('hands over while the loop was busy less than the bound, and leaves events to the claim beyond it', () => {
    let utilization = 0.05;
    const gate = handOverWhileIdle(relay(), 0.15, () => utilization);
    expect(gate.ready()).toBe(true);
    utilization = 0.15;
    expect(gate.ready()).toBe(false);
    utilization = 0.9;
    expect(gate.ready()).toBe(false);
  });

  it('always hands over at 1, never at 0, and never while the relay cannot publish', () => {
    expect(handOverWhileIdle(relay(), 1, () => 1).ready()).toBe(true);
    expect(handOverWhileIdle(relay(), 0, () => 0).ready()).toBe(false);
    expect(handOverWhileIdle(relay(false), 1, () => 0).ready()).toBe(false);
  });

  it('passes the lease and the events through', () => {
    const inner = relay();
    const gate = handOverWhileIdle(inner, 0.15, () => 0);
    const event = { id: 'e', subject: 'issues.created', payload: '{}', trace_context: null, created_at: new Date(), order_key: '1' };
    gate.publish(event);
    expect(inner.publish).toHaveBeenCalledWith(event);
    expect(gate.leaseSeconds).toBe(15);
  });
});

describe('RecentLoopUtilization', () => {
  it('reads a loop that ran without a break for the whole span as fully busy', () => {
    const recent = new RecentLoopUtilization(20);
    const until = performance.now() + 60;
    while (performance.now() < until) {
      // busy: no turn of the loop ends
    }
    expect(recent.value).toBeGreaterThan(0.9);
  });
});
