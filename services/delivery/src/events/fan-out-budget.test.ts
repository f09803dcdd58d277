import { FanOutBudget } from './fan-out-budget';

function budget(perSecond: number, burst: number) {
  let clock = 100;
  const instance = new FanOutBudget(perSecond, burst, () => clock);
  return { instance, advance: (seconds: number) => void (clock += seconds) };
}

describe('FanOutBudget', () => {
  it('lets events through while the team has deliveries left, one larger than what is left included', () => {
    const { instance } = budget(10, 100);
    expect(instance.admit(1, 60)).toBe(true);
    expect(instance.admit(1, 60)).toBe(true);
    // 100 - 120: the team owes 20 deliveries, and waits.
    expect(instance.admit(1, 1)).toBe(false);
    expect(instance.available(1)).toBe(0);
    expect(instance.msUntilAvailable(1)).toBe(2_100);
  });

  it('keeps a waiting team waiting until its backlog is empty, so its events stay in order', () => {
    const { instance, advance } = budget(10, 10);
    expect(instance.admit(1, 10)).toBe(true);
    expect(instance.admit(1, 1)).toBe(false);
    advance(60);
    expect(instance.available(1)).toBe(10);
    expect(instance.admit(1, 1)).toBe(false);
    instance.setWaiting([]);
    expect(instance.admit(1, 1)).toBe(true);
  });

  it("leaves other teams' budgets alone", () => {
    const { instance } = budget(1, 5);
    expect(instance.admit(1, 50)).toBe(true);
    expect(instance.admit(1, 1)).toBe(false);
    expect(instance.admit(2, 5)).toBe(true);
  });

  it('lets events without deliveries through, and everything when the budget is off', () => {
    const limited = budget(1, 1).instance;
    limited.admit(1, 1);
    expect(limited.admit(1, 0)).toBe(true);
    const off = budget(0, 1).instance;
    expect([1, 2, 3].every(() => off.admit(1, 1_000))).toBe(true);
  });

  it('forgets full buckets when swept', () => {
    const { instance, advance } = budget(10, 10);
    instance.spend(1, 5);
    advance(1);
    instance.sweep();
    expect(instance.available(1)).toBe(10);
  });
});
