import { GroupCommit } from './group-commit';

describe('GroupCommit', () => {
  it('writes items submitted together in one batch and resolves each with its own result', async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit<number, number>(async (items) => {
      batches.push(items);
      return items.map((item) => item * 10);
    });
    await expect(Promise.all([1, 2, 3].map((item) => commit.submit(item)))).resolves.toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('batches what arrives while a write is in flight, within the batch limit', async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const commit = new GroupCommit<number, number>(
      async (items) => {
        batches.push(items);
        if (batches.length === 1) await new Promise<void>((resolve) => (release = resolve));
        return items;
      },
      2,
      1,
    );
    const first = commit.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const rest = [2, 3, 4].map((item) => commit.submit(item));
    release();
    await Promise.all([first, ...rest]);
    expect(batches).toEqual([[1], [2, 3], [4]]);
  });

  it('rejects every item of a failed batch', async () => {
    const commit = new GroupCommit<number, number>(async () => {
      throw new Error('database down');
    });
    await expect(Promise.all([commit.submit(1), commit.submit(2)])).rejects.toThrow('database down');
  });
});

describe('GroupCommit with a linger time', () => {
  afterEach(() => jest.useRealTimers());

  it('holds a lone item for the linger time so that items arriving meanwhile share its write', async () => {
    jest.useFakeTimers();
    const batches: number[][] = [];
    const commit = new GroupCommit<number, number>(async (items) => (batches.push(items), items), 200, 1, 20);
    const first = commit.submit(1);
    jest.advanceTimersByTime(10);
    expect(batches).toEqual([]);
    const second = commit.submit(2);
    jest.advanceTimersByTime(10);
    await Promise.all([first, second]);
    expect(batches).toEqual([[1, 2]]);
  });
});
