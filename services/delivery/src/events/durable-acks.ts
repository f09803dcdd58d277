/** How DurableAcks flushes (see there). */
export interface DurableAcksOptions {
  /** A commit that waits for the WAL flush (DeliveryStore.flushCommits). */
  flush: () => Promise<void>;
  /** Longest an event waits for its flush (0: a flush starts at once). */
  withinMs: number;
  /** Told when a flush failed; its events were offered again (negative acknowledgement). */
  onFailure?: (error: unknown, events: number) => void;
}

interface Waiting {
  ack: () => void;
  nak: () => void;
}

/**
 * Acknowledges events on the bus once what their fan-out stored is on disk.
 *
 * The fan-out that hands deliveries to the sender at once commits without waiting for PostgreSQL's
 * WAL flush (DeliveryStore.createForEventsSendingNow): the first attempt starts while the flush
 * would still be running. Its event stays unacknowledged until a later commit that does wait for
 * the flush has returned (DeliveryStore.flushCommits): WAL is flushed in order, so that flush covers
 * the fan-out's commit too. Should PostgreSQL crash before, the deliveries may be lost, but JetStream
 * still holds the event and offers it again, and it is fanned out again: at least once, as before.
 *
 * One flush serves every event waiting when it starts; the first of them waits up to `withinMs`
 * for company (the acknowledgement is off every delivery's path, so the wait only saves flushes).
 * Events that arrive while a flush is in flight wait for the next one: the flush in flight may have
 * been sent before their commit.
 */
export class DurableAcks {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(private readonly options: DurableAcksOptions) {}

  /** Events waiting for a flush. */
  get pending(): number {
    return this.waiting.length;
  }

  /**
   * Calls `ack` once a flush that started after this call has returned, or `nak` when it failed
   * (the event is then offered again, and its fan-out finds what survived).
   */
  afterFlush(ack: () => void, nak: () => void): void {
    this.waiting.push({ ack, nak });
    this.schedule();
  }

  /** Flushes for every event waiting now, at once, and resolves when they are settled (at stop). */
  async settle(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.flushing || this.waiting.length > 0) {
      if (this.flushing) await this.flushing;
      else await this.flushNow();
    }
  }

  private schedule(): void {
    if (this.timer || this.flushing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flushNow();
    }, this.options.withinMs);
  }

  private flushNow(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    const flushing = this.options.flush().then(
      () => {
        for (const event of batch) settleQuietly(event.ack);
      },
      (error: unknown) => {
        this.options.onFailure?.(error, batch.length);
        for (const event of batch) settleQuietly(event.nak);
      },
    );
    this.flushing = flushing.finally(() => {
      this.flushing = undefined;
      if (this.waiting.length > 0) this.schedule();
    });
    return this.flushing;
  }
}

/** An acknowledgement that cannot be sent (the connection closed) leaves the event to JetStream's redelivery. */
function settleQuietly(settle: () => void): void {
  try {
    settle();
  } catch {
    // Offered again once its ack wait runs out; its fan-out then finds its deliveries stored.
  }
}
