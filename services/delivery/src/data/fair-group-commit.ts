/**
 * Group commit with one queue per key (a team), so that one key's burst or slow write never makes
 * another key's items wait behind it:
 * - a write carries the items of one key only (one team's events never share a statement, nor wait
 *   for a look-up, with another team's);
 * - keys take turns for the writes (round robin, in the order their items arrived);
 * - a write goes to the waiting key with the fewest writes in flight, and one key holds all the
 *   writes but one at most: a team that floods the queue leaves a write free for another team,
 *   whose items then need not wait for the flood's statements to finish.
 * A busy team alone still has all the writes but one, so it loses little throughput. Items
 * submitted in the same turn of the event loop join one write, as in GroupCommit.
 */
export class FairGroupCommit<Key, Item, Result> {
  /** Waiting items per key; the Map's order is the keys' turn order. */
  private readonly queues = new Map<Key, { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[]>();
  /** Writes in flight per key. */
  private readonly writing = new Map<Key, number>();
  private inFlight = 0;
  private scheduled = false;
  /** One write is always kept for the other keys (when there are two writes or more). */
  private readonly maxWritesPerKey: number;

  constructor(
    /** Writes a batch of one key's items; resolves to one result per item, in order. */
    private readonly write: (key: Key, items: Item[]) => Promise<Result[]>,
    private readonly maxBatch = 200,
    private readonly maxConcurrentWrites = 3,
  ) {
    this.maxWritesPerKey = Math.max(1, maxConcurrentWrites - 1);
  }

  /** Items waiting for a write, all keys together. */
  get waiting(): number {
    let count = 0;
    for (const queue of this.queues.values()) count += queue.length;
    return count;
  }

  submit(key: Key, item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) queue.push({ item, resolve, reject });
      else this.queues.set(key, [{ item, resolve, reject }]);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxConcurrentWrites || this.queues.size === 0) return;
    this.scheduled = true;
    // Items submitted in the same turn of the event loop join the writes started here.
    setImmediate(() => {
      this.scheduled = false;
      this.startWrites();
    });
  }

  /**
   * The key whose turn it is: of the waiting keys, the one with the fewest writes in flight, the
   * earliest in turn order among equals. A key takes a second write only when every waiting key
   * has one already, so no key takes the writes of the others, and no write stays idle while
   * items wait.
   */
  private nextKey(): Key | undefined {
    let chosen: Key | undefined;
    let fewest = Infinity;
    for (const key of this.queues.keys()) {
      const writes = this.writing.get(key) ?? 0;
      if (writes === 0) return key;
      if (writes >= this.maxWritesPerKey) continue;
      if (writes < fewest) {
        fewest = writes;
        chosen = key;
      }
    }
    return chosen;
  }

  private startWrites(): void {
    while (this.inFlight < this.maxConcurrentWrites) {
      const key = this.nextKey();
      if (key === undefined) return;
      const queue = this.queues.get(key)!;
      const batch = queue.splice(0, this.maxBatch);
      // The key goes to the end of the turn order (or leaves it, with nothing left to write).
      this.queues.delete(key);
      if (queue.length > 0) this.queues.set(key, queue);
      void this.writeBatch(key, batch);
    }
  }

  private async writeBatch(key: Key, batch: { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[]): Promise<void> {
    this.inFlight += 1;
    this.writing.set(key, (this.writing.get(key) ?? 0) + 1);
    try {
      const results = await this.write(
        key,
        batch.map((entry) => entry.item),
      );
      batch.forEach((entry, index) => entry.resolve(results[index] as Result));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      this.inFlight -= 1;
      const writes = (this.writing.get(key) ?? 1) - 1;
      if (writes > 0) this.writing.set(key, writes);
      else this.writing.delete(key);
      this.schedule();
    }
  }
}
