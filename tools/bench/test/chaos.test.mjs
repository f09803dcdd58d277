// The chaos benchmark's plan and figures.
import { busiestWindow, limitBound, missingFrom, orderViolations, planWebhooks, spread } from '../src/chaos-figures.mjs';

describe('the chaos plan', () => {
  it('deals the misbehaving webhooks to the teams in turn and scopes one healthy webhook per team', () => {
    const plan = planWebhooks({ teams: 20, perTeam: 5, failing: 10, slow: 10, limited: 10 });
    expect(plan).toHaveLength(100);
    const count = (kind) => plan.filter((webhook) => webhook.kind === kind).length;
    expect([count('failing'), count('slow'), count('limited'), count('healthy')]).toEqual([10, 10, 10, 70]);
    for (let team = 0; team < 20; team++) {
      const own = plan.filter((webhook) => webhook.team === team);
      expect(own).toHaveLength(5);
      // every team has misbehaving and healthy endpoints side by side, and one scoped healthy one
      expect(own.some((webhook) => webhook.kind !== 'healthy')).toBe(true);
      expect(own.filter((webhook) => webhook.kind === 'healthy' && !webhook.filtered).length).toBeGreaterThan(0);
      expect(own.filter((webhook) => webhook.filtered)).toHaveLength(1);
    }
    expect(plan.filter((webhook) => webhook.filtered).every((webhook) => webhook.kind === 'healthy')).toBe(true);
  });

  it('refuses more misbehaving webhooks than the teams have room for', () => {
    expect(() => planWebhooks({ teams: 2, perTeam: 1, failing: 2, slow: 1, limited: 0 })).toThrow(/no room/);
  });

  it('scopes nothing in a team left with a single healthy webhook', () => {
    const plan = planWebhooks({ teams: 1, perTeam: 2, failing: 1, slow: 0, limited: 0 });
    expect(plan.map(({ kind, filtered }) => [kind, filtered])).toEqual([
      ['failing', false],
      ['healthy', false],
    ]);
  });
});

describe('the chaos figures', () => {
  it('takes p50, p99 and max of an unsorted list', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(spread(values)).toEqual({ count: 100, p50: 51, p99: 100, max: 100 });
    expect(spread([]).p99).toBeNaN();
  });

  it('lists what was expected and not received', () => {
    expect(missingFrom([1, 2, 3, 4], new Set([2, 4]))).toEqual([1, 3]);
    expect(
      missingFrom(
        [1, 2],
        new Map([
          [1, {}],
          [2, {}],
        ]),
      ),
    ).toEqual([]);
  });

  it('counts each delivery that arrived after a later one of the same issue', () => {
    expect(orderViolations([])).toBe(0);
    expect(
      orderViolations([
        ['a', 0],
        ['b', 0],
        ['a', 1],
        ['b', 1],
        ['a', 2],
      ]),
    ).toBe(0);
    expect(
      orderViolations([
        ['a', 1],
        ['a', 0],
        ['a', 2],
        ['b', 2],
        ['b', 0],
        ['b', 1],
      ]),
    ).toBe(3);
  });

  it('finds the busiest window of timestamps', () => {
    expect(busiestWindow([])).toBe(0);
    expect(busiestWindow([0, 999, 1_000, 1_500, 1_998])).toBe(4); // 999 to 1,998
    expect(busiestWindow([5_000, 0, 100, 200], 1_000)).toBe(3);
    expect(busiestWindow([0, 1_000, 2_000], 1_000)).toBe(1);
  });

  it("bounds a rate-limited endpoint's windows by the documented bucket: a second's worth, then the limit's pace", () => {
    expect([limitBound(1, 1_000), limitBound(1, 5_000), limitBound(10, 5_000), limitBound(3, 500)]).toEqual([2, 6, 60, 4]);
    // A sender keeping exactly to the bucket with a backlog: a full bucket at once, then one every 1/limit.
    const keeping = (perSecond, count) => Array.from({ length: count }, (_, n) => (n < perSecond ? 0 : ((n - perSecond + 1) * 1_000) / perSecond));
    for (const perSecond of [1, 2, 10]) {
      const times = keeping(perSecond, 30 * perSecond);
      for (const windowMs of [1_000, 5_000]) {
        const bound = limitBound(perSecond, windowMs);
        // One fewer than the bound at most in a window without its end: one request of room to spare.
        expect(busiestWindow(times, windowMs)).toBe(bound - 1);
        // One request more than the bucket allows fits in that room (a request late on its way
        // arrives together with the next); two more do not.
        expect(busiestWindow([...times, 0], windowMs)).toBe(bound);
        expect(busiestWindow([...times, 0, 0], windowMs)).toBe(bound + 1);
      }
    }
  });
});
