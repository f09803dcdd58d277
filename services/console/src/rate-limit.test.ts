import { AttemptLimiter, describeWait, signInThrottle } from './rate-limit';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('AttemptLimiter', () => {
  it('refuses a key once it has failed max times within the window, and says for how long', () => {
    const time = clock();
    const limiter = new AttemptLimiter({ max: 3, windowMs: 60_000, now: time.now });
    for (let i = 0; i < 3; i += 1) {
      expect(limiter.retryAfterMs('a')).toBe(0);
      limiter.recordFailure('a');
      time.advance(1_000);
    }
    // The first failure leaves the window 60 s after it happened, 57 s from now.
    expect(limiter.retryAfterMs('a')).toBe(57_000);
    expect(limiter.retryAfterMs('b')).toBe(0);
  });

  it('lets the key try again as failures slide out of the window', () => {
    const time = clock();
    const limiter = new AttemptLimiter({ max: 2, windowMs: 10_000, now: time.now });
    limiter.recordFailure('a');
    time.advance(5_000);
    limiter.recordFailure('a');
    expect(limiter.retryAfterMs('a')).toBe(5_000);
    time.advance(5_000);
    expect(limiter.retryAfterMs('a')).toBe(0);
  });

  it('forgets a key on reset', () => {
    const limiter = new AttemptLimiter({ max: 1, windowMs: 10_000 });
    limiter.recordFailure('a');
    expect(limiter.retryAfterMs('a')).toBeGreaterThan(0);
    limiter.reset('a');
    expect(limiter.retryAfterMs('a')).toBe(0);
  });

  it('keeps at most maxKeys keys, forgetting those that failed longest ago', () => {
    const limiter = new AttemptLimiter({ max: 1, windowMs: 60_000, maxKeys: 2 });
    limiter.recordFailure('first');
    limiter.recordFailure('second');
    limiter.recordFailure('third');
    expect(limiter.retryAfterMs('first')).toBe(0);
    expect(limiter.retryAfterMs('second')).toBeGreaterThan(0);
    expect(limiter.retryAfterMs('third')).toBeGreaterThan(0);
  });
});

describe('signInThrottle', () => {
  it('asks the token service to count the attempt against the account and the address, in whole seconds', () => {
    expect(signInThrottle({ windowMs: 90_500, maxPerEmail: 5, maxPerIp: 20 }, '203.0.113.9')).toEqual({
      client_address: '203.0.113.9',
      window_seconds: 91,
      max_per_account: 5,
      max_per_address: 20,
    });
  });

  it('keeps an over-long address within what the token service accepts', () => {
    expect(signInThrottle({ windowMs: 1_000, maxPerEmail: 1, maxPerIp: 1 }, 'x'.repeat(500)).client_address).toHaveLength(64);
  });
});

describe('describeWait', () => {
  it('says how long to wait in words', () => {
    expect(describeWait(1)).toBe('1 second');
    expect(describeWait(45)).toBe('45 seconds');
    expect(describeWait(60)).toBe('1 minute');
    expect(describeWait(61)).toBe('2 minutes');
    expect(describeWait(900)).toBe('15 minutes');
  });
});
