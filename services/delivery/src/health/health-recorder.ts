import type { Logger } from '@worklane/observability';
import { GroupCommit } from '../data/group-commit';
import type { AttemptObservation, BreakerTransition, HealthStore } from './health-store';

/** Attempts recorded within this time are added to endpoint health by one statement. */
const LINGER_MS = 20;
const MAX_BATCH = 500;

/** What the sender reports to endpoint health. */
export interface HealthObserver {
  attempt(observation: AttemptObservation): void;
  breaker(transition: BreakerTransition): void;
}

/**
 * What the sender tells endpoint health: each recorded attempt and each circuit breaker
 * transition. Writes happen behind the sender's back, batched, one at a time (so two batches never
 * wait on each other's rows); a failed write is logged and costs the health figures those attempts,
 * never a delivery.
 */
export class HealthRecorder implements HealthObserver {
  private readonly attempts: GroupCommit<AttemptObservation, null>;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly store: HealthStore,
    private readonly logger: Logger,
  ) {
    this.attempts = new GroupCommit(
      async (batch) => {
        await store.recordAttempts(batch);
        return batch.map(() => null);
      },
      MAX_BATCH,
      1,
      LINGER_MS,
    );
  }

  /** An attempt the delivery log has recorded. */
  attempt(observation: AttemptObservation): void {
    this.track(this.attempts.submit(observation), 'recording an attempt in endpoint health failed');
  }

  /** A circuit breaker of this replica opened or closed. */
  breaker(transition: BreakerTransition): void {
    this.track(this.store.recordBreaker(transition), 'recording a circuit breaker transition failed');
  }

  /** Waits for the writes in flight (shutdown, tests). */
  async flush(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }

  private track(write: Promise<unknown>, message: string): void {
    const tracked = write.catch((error) => this.logger.warn({ err: error }, message)).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }
}
