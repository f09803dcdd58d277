import { ConnectionPacing } from './connection-pacing';

function pacing(perSecond: number, burst: number) {
  let clock = 100;
  const instance = new ConnectionPacing(perSecond, burst, () => clock);
  return { instance, advance: (seconds: number) => void (clock += seconds) };
}

describe('ConnectionPacing', () => {
  it('lets a team open its burst at once and spreads the connections past it at its rate', () => {
    const { instance } = pacing(10, 3);
    const waits = Array.from({ length: 6 }, () => instance.delayMs(1));
    expect(waits).toEqual([0, 0, 0, 100, 200, 300]);
  });

  it('paces each team on its own: one team past its burst holds no other team back', () => {
    const { instance } = pacing(10, 1);
    for (let n = 0; n < 50; n++) instance.delayMs(1);
    expect(instance.delayMs(2)).toBe(0);
    expect(instance.delayMs(1)).toBe(5_000);
  });

  it('gives the burst back as time passes', () => {
    const { instance, advance } = pacing(10, 2);
    expect([instance.delayMs(1), instance.delayMs(1), instance.delayMs(1)]).toEqual([0, 0, 100]);
    advance(0.1);
    expect(instance.delayMs(1)).toBeCloseTo(100, 6);
    advance(10);
    expect([instance.delayMs(1), instance.delayMs(1)]).toEqual([0, 0]);
  });

  it('never waits with a rate of 0', () => {
    const { instance } = pacing(0, 1);
    expect(Array.from({ length: 5 }, () => instance.delayMs(1))).toEqual([0, 0, 0, 0, 0]);
  });

  it('forgets the teams whose burst is whole again, so many teams seen once hold no memory', () => {
    const { instance, advance } = pacing(10, 1);
    for (let team = 1; team <= 1_024; team++) instance.delayMs(team);
    advance(1);
    instance.delayMs(5_000);
    expect(instance.teams).toBe(1_025);
    // The sweep forgets the full buckets and keeps the one still spent.
    instance.sweep();
    expect(instance.teams).toBe(1);
    expect(instance.delayMs(5_000)).toBe(100);
  });
});
