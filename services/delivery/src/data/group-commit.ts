/**
 * Group commit: items submitted while a write is in flight are written together by the next one.
 * An idle system writes each item at once; a busy one writes fewer, larger statements, which is
 * what lets one replica record attempts and fan out events at thousands per second.
 */
export class GroupCommit<Item, Result> {
  private queue: { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[] = [];
  private flushing = 0;
  private scheduled = false;

  constructor(
    /** Writes a batch; resolves to one result per item, in order. */
    private readonly write: (items: Item[]) => Promise<Result[]>,
    private readonly maxBatch = 200,
    private readonly maxConcurrentWrites = 2,
    /** How long a batch waits for company before it is written (Kafka's linger.ms). */
    private readonly lingerMs = 0,
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing >= this.maxConcurrentWrites || this.queue.length === 0) return;
    this.scheduled = true;
    const flush = () => {
      this.scheduled = false;
      void this.flush();
    };
    // Items submitted in the same turn of the event loop, or within the linger time, join this batch.
    if (this.lingerMs > 0 && this.queue.length < this.maxBatch) setTimeout(flush, this.lingerMs);
    else setImmediate(flush);
  }

  private async flush(): Promise<void> {
    if (this.flushing >= this.maxConcurrentWrites || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.maxBatch);
    this.flushing += 1;
    try {
      const results = await this.write(batch.map((entry) => entry.item));
      batch.forEach((entry, index) => entry.resolve(results[index] as Result));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      this.flushing -= 1;
      this.schedule();
    }
  }
}
