import { FairGroupCommit } from './fair-group-commit';

/** A write that is held until released, recording what it was given. */
function heldWrites() {
  const writes: { key: string; items: number[]; release: () => void }[] = [];
  const write = (key: string, items: number[]) =>
    new Promise<number[]>((resolve) => {
      writes.push({ key, items, release: () => resolve(items.map((item) => item * 10)) });
    });
  return { writes, write };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('FairGroupCommit', () => {
  it("writes each key's items apart, those submitted together in one write, and resolves each with its own result", async () => {
    const batches: [string, number[]][] = [];
    const commit = new FairGroupCommit<string, number, number>(async (key, items) => {
      batches.push([key, items]);
      return items.map((item) => item * 10);
    });
    const results = await Promise.all([commit.submit('a', 1), commit.submit('b', 2), commit.submit('a', 3)]);
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([
      ['a', [1, 3]],
      ['b', [2]],
    ]);
  });

  it("keeps a write free for another key while one key's writes are held", async () => {
    const { writes, write } = heldWrites();
    const commit = new FairGroupCommit<string, number, number>(write, 200, 3);
    const flood = [commit.submit('flood', 1)];
    await turn();
    flood.push(commit.submit('flood', 2));
    await turn();
    flood.push(commit.submit('flood', 3));
    await turn();
    // The flood has all the writes but one; its third item waits for one of them.
    expect(writes.map((entry) => entry.items)).toEqual([[1], [2]]);
    const other = commit.submit('other', 4);
    await turn();
    expect(writes.map((entry) => [entry.key, entry.items])).toEqual([
      ['flood', [1]],
      ['flood', [2]],
      ['other', [4]],
    ]);
    writes[2]!.release();
    await expect(other).resolves.toBe(40);
    // The flood's waiting item goes once one of its own writes ends.
    expect(commit.waiting).toBe(1);
    writes[0]!.release();
    await turn();
    await turn();
    expect(writes.map((entry) => entry.items)).toEqual([[1], [2], [4], [3]]);
    writes[1]!.release();
    writes[3]!.release();
    await expect(Promise.all(flood)).resolves.toEqual([10, 20, 30]);
  });

  it('gives a freed write to a waiting key before the key that still holds one', async () => {
    const { writes, write } = heldWrites();
    const commit = new FairGroupCommit<string, number, number>(write, 1, 2);
    const all = [commit.submit('a', 1), commit.submit('a', 2), commit.submit('a', 3)];
    await turn();
    // One key alone has all the writes but one.
    expect(writes.map((entry) => entry.items)).toEqual([[1]]);
    all.push(commit.submit('b', 4), commit.submit('c', 5));
    await turn();
    expect(writes.map((entry) => entry.key)).toEqual(['a', 'b']);
    // b's write ends while a's is still in flight: c, with none, goes before a's second.
    writes[1]!.release();
    await all[3];
    await turn();
    expect(writes.map((entry) => entry.key)).toEqual(['a', 'b', 'c']);
    // Once nobody else waits, a's items go one write after the other.
    writes[0]!.release();
    writes[2]!.release();
    await Promise.all([all[0], all[4]]);
    for (let round = 0; round < 4 && writes.length < 5; round += 1) {
      await turn();
      for (const entry of writes.slice(3)) entry.release();
      await turn();
    }
    await expect(Promise.all(all)).resolves.toEqual([10, 20, 30, 40, 50]);
    expect(writes.map((entry) => [entry.key, entry.items])).toEqual([
      ['a', [1]],
      ['b', [4]],
      ['c', [5]],
      ['a', [2]],
      ['a', [3]],
    ]);
  });

  it('rejects every item of a failed write and goes on with the others', async () => {
    const commit = new FairGroupCommit<string, number, number>(async (key, items) => {
      if (key === 'broken') throw new Error('database down');
      return items;
    });
    const broken = Promise.all([commit.submit('broken', 1), commit.submit('broken', 2)]);
    const fine = commit.submit('fine', 3);
    await expect(broken).rejects.toThrow('database down');
    await expect(fine).resolves.toBe(3);
  });
});
