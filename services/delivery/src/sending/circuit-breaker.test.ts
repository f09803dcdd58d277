import { CircuitBreakers, isEndpointFailure } from './circuit-breaker';

describe('CircuitBreakers', () => {
  let now = 1_000_000;
  // random 0.5: each wait is the cool-down itself (no spread either way).
  const breakers = (random = () => 0.5) => new CircuitBreakers({ failureThreshold: 3, coolDownMs: 1_000, maxCoolDownMs: 3_000, now: () => now, random });

  it('opens after the threshold of consecutive failures, half-opens after the cool-down and closes on a success', () => {
    const circuit = breakers();
    expect(circuit.record(7, true)).toBeUndefined();
    expect(circuit.record(7, true)).toBeUndefined();
    expect(circuit.state(7)).toBe('closed');
    expect(circuit.record(7, true)).toBe('opened');
    expect(circuit.health(7)).toEqual({ webhookId: 7, state: 'open', consecutiveFailures: 3, openedAt: now, retryAt: now + 1_000 });
    // Attempts already in flight when it opened change nothing.
    expect(circuit.record(7, true)).toBeUndefined();
    now += 1_000;
    expect(circuit.state(7)).toBe('half_open');
    expect(circuit.counts()).toEqual({ closed: 0, open: 0, half_open: 1 });
    expect(circuit.record(7, false)).toBe('closed');
    expect(circuit.state(7)).toBe('closed');
    expect(circuit.notClosed()).toEqual([]);
  });

  it('doubles the cool-down after each failed probe, up to the maximum', () => {
    const circuit = breakers();
    for (let i = 0; i < 3; i += 1) circuit.record(1, true);
    const cooldowns: number[] = [];
    for (let probe = 0; probe < 3; probe += 1) {
      now = circuit.health(1).retryAt!;
      expect(circuit.state(1)).toBe('half_open');
      expect(circuit.record(1, true)).toBe('opened');
      cooldowns.push(circuit.health(1).retryAt! - now);
    }
    expect(cooldowns).toEqual([2_000, 3_000, 3_000]);
  });

  it('spreads each wait by up to a fifth of the cool-down either way; the doubling goes on from the cool-down itself', () => {
    const shortest = breakers(() => 0);
    for (let i = 0; i < 3; i += 1) shortest.record(1, true);
    expect(shortest.health(1).retryAt).toBe(now + 800);
    const longest = breakers(() => 0.999_999);
    for (let i = 0; i < 3; i += 1) longest.record(1, true);
    expect(longest.health(1).retryAt).toBe(now + 1_200);

    const cooldowns: number[] = [];
    for (let probe = 0; probe < 3; probe += 1) {
      now = shortest.health(1).retryAt!;
      shortest.record(1, true);
      cooldowns.push(shortest.health(1).retryAt! - now);
    }
    expect(cooldowns).toEqual([1_600, 2_400, 2_400]);
  });

  it('probes endpoints that failed together at different times', () => {
    const circuit = new CircuitBreakers({ failureThreshold: 1, coolDownMs: 30_000, maxCoolDownMs: 600_000, now: () => now });
    for (let webhookId = 1; webhookId <= 50; webhookId += 1) circuit.record(webhookId, true);
    const waits = circuit.notClosed().map((health) => health.retryAt! - now);
    expect(waits).toHaveLength(50);
    for (const wait of waits) {
      expect(wait).toBeGreaterThanOrEqual(24_000);
      expect(wait).toBeLessThanOrEqual(36_000);
    }
    // 50 draws over 12 s: a wave would be one instant; spread, they cover most of the window.
    expect(Math.max(...waits) - Math.min(...waits)).toBeGreaterThan(6_000);
  });

  it('forgets an endpoint whose failures are followed by a success', () => {
    const circuit = breakers();
    circuit.record(2, true);
    circuit.record(2, true);
    circuit.record(2, false);
    circuit.record(2, true);
    circuit.record(2, true);
    expect(circuit.state(2)).toBe('closed');
    expect(circuit.counts()).toEqual({ closed: 1, open: 0, half_open: 0 });
  });

  it('counts no answer, 5xx and 429 against an endpoint, and nothing else', () => {
    expect([null, 500, 503, 429].map((statusCode) => isEndpointFailure({ statusCode }))).toEqual([true, true, true, true]);
    expect([200, 204, 302, 400, 404, 410].map((statusCode) => isEndpointFailure({ statusCode }))).toEqual([false, false, false, false, false, false]);
  });
});
