import { TokenBuckets } from './token-buckets';

function buckets(perSecond: number, burst: number) {
  let clock = 50;
  const instance = new TokenBuckets(perSecond, burst, () => clock);
  return { instance, advance: (seconds: number) => void (clock += seconds) };
}

describe('TokenBuckets', () => {
  it('starts full, refills at the rate up to the burst, and lets a spend go into debt', () => {
    const { instance, advance } = buckets(2, 4);
    expect(instance.level(1)).toBe(4);
    instance.spend(1, 6);
    expect(instance.level(1)).toBe(-2);
    expect(instance.msUntil(1, 1)).toBe(1_500);
    advance(10);
    expect(instance.level(1)).toBe(4);
    expect(instance.msUntil(1, 1)).toBe(0);
  });

  it('keeps keys apart and forgets full buckets when swept, except those it is told to keep', () => {
    const { instance, advance } = buckets(1, 2);
    instance.spend(1, 1);
    instance.spend(2, 2);
    advance(1);
    instance.sweep();
    expect(instance.size).toBe(1);
    advance(1);
    instance.sweep((key) => key === 2);
    expect(instance.size).toBe(1);
    instance.sweep();
    expect(instance.size).toBe(0);
  });

  it('takes a level set from elsewhere (at most the burst), then refills from it, and lists its keys', () => {
    const { instance, advance } = buckets(1, 5);
    instance.set(1, -1);
    instance.set(2, 99);
    expect(instance.level(1)).toBe(-1);
    expect(instance.level(2)).toBe(5);
    expect([...instance.keys()].sort()).toEqual([1, 2]);
    advance(2);
    expect(instance.level(1)).toBe(1);
    expect(instance.allowance).toEqual({ perSecond: 1, burst: 5 });
  });
});
