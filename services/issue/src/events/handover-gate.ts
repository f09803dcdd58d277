import { performance } from 'node:perf_hooks';
import type { CommittedEventPublisher } from '../data/issues';

/** OUTBOX_HANDOVER_MAX_LOOP_UTILIZATION's default. */
export const DEFAULT_HANDOVER_MAX_LOOP_UTILIZATION = 0.5;

/** The shortest span the utilization is measured over. */
const WINDOW_MS = 100;

/**
 * How busy this thread's event loop has been lately: the share of the last measured span (at least
 * WINDOW_MS, ending at the latest read that started a new span) it spent running callbacks rather
 * than waiting for I/O. Read on demand: no timer, nothing to stop.
 */
export class RecentLoopUtilization {
  private base = performance.eventLoopUtilization();
  private baseAtMs = performance.now();
  private last = 0;

  constructor(private readonly windowMs = WINDOW_MS) {}

  get value(): number {
    const now = performance.now();
    if (now - this.baseAtMs >= this.windowMs) {
      const current = performance.eventLoopUtilization();
      this.last = performance.eventLoopUtilization(current, this.base).utilization;
      this.base = current;
      this.baseAtMs = now;
    }
    return this.last;
  }
}

/**
 * Decides, for each create, whether its committed event is handed to the relay's thread by the API
 * thread (the direct hand-over) or left to the relay's claim. The hand-over is made by the API
 * thread once it reads the create's result, so it waits for whatever that thread is running then:
 * a large page being serialized, a body being checked, their garbage collections. The claim does
 * not: the commit's notification wakes the relay's own thread through PostgreSQL. So a create
 * hands its event over only while the API thread's event loop has been busy less than
 * `maxUtilization` of the last span; beyond that (one team's requests keeping it busy), events
 * take the claim, which costs about one statement more but no wait behind other work. 1: always
 * hand over; 0: never.
 */
export function handOverWhileIdle(publisher: CommittedEventPublisher, maxUtilization: number, utilization: () => number = thisThreadsLoopUtilization()): CommittedEventPublisher {
  return {
    leaseSeconds: publisher.leaseSeconds,
    ready: () => publisher.ready() && (maxUtilization >= 1 || utilization() < maxUtilization),
    publish: (event) => publisher.publish(event),
  };
}

/** Reads a RecentLoopUtilization of the calling thread. */
function thisThreadsLoopUtilization(): () => number {
  const recent = new RecentLoopUtilization();
  return () => recent.value;
}
