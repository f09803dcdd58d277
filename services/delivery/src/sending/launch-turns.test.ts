import { LaunchTurns } from './launch-turns';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('LaunchTurns', () => {
  it('starts at most perTurn attempts in one turn of the event loop, the rest in the next turns', async () => {
    const turns = new LaunchTurns(3);
    const started: number[] = [];
    const all = Array.from({ length: 7 }, (_, n) => turns.next(1).then(() => started.push(n)));
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    await turn();
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    await turn();
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
    await Promise.all(all);
    expect(turns.queued).toBe(0);
  });

  it("starts another team's attempt in the next turn, however many one team has waiting", async () => {
    const turns = new LaunchTurns(2);
    const started: string[] = [];
    const flood = Array.from({ length: 10 }, (_, n) => turns.next(1).then(() => started.push(`flood ${n}`)));
    const other = turns.next(2).then(() => started.push('other'));
    await Promise.resolve();
    expect(started).toEqual(['flood 0', 'flood 1']);
    await turn();
    // The teams take turns: the other team's attempt is among the next turn's starts.
    expect(started).toEqual(['flood 0', 'flood 1', 'flood 2', 'other']);
    await other;
    for (let round = 0; round < 5; round += 1) await turn();
    await Promise.all(flood);
    expect(started).toHaveLength(11);
  });

  it('starts at once again once a quiet turn has passed', async () => {
    const turns = new LaunchTurns(1);
    await turns.next(1);
    await turn();
    await turn();
    let started = false;
    void turns.next(2).then(() => (started = true));
    await Promise.resolve();
    expect(started).toBe(true);
  });
});
