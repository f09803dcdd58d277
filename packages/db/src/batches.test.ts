import { untilShortBatch } from './batches';

/** A batch function that handles the given counts in turn, and records each call. */
function batches(counts: number[]) {
  const calls: number[] = [];
  const run = async () => {
    const handled = counts[calls.length] ?? 0;
    calls.push(handled);
    return handled;
  };
  return { run, calls };
}

describe('untilShortBatch', () => {
  it('runs batches until one comes back short, and adds up what they handled', async () => {
    const { run, calls } = batches([3, 3, 1, 3]);
    await expect(untilShortBatch(run, 3)).resolves.toBe(7);
    expect(calls).toEqual([3, 3, 1]);
  });

  it('stops after an empty first batch', async () => {
    const { run, calls } = batches([0, 3]);
    await expect(untilShortBatch(run, 3, { restRatio: 1 })).resolves.toBe(0);
    expect(calls).toEqual([0]);
  });

  it('rests between full batches and still runs them all', async () => {
    const { run, calls } = batches([2, 2, 2, 0]);
    await expect(untilShortBatch(run, 2, { restRatio: 1, maxRestMs: 5 })).resolves.toBe(6);
    expect(calls).toEqual([2, 2, 2, 0]);
  });

  it('asks keepGoing before each batch', async () => {
    const { run, calls } = batches([5, 5, 5, 5]);
    let allowed = 2;
    await expect(untilShortBatch(run, 5, { keepGoing: () => allowed-- > 0 })).resolves.toBe(10);
    expect(calls).toEqual([5, 5]);
  });
});
