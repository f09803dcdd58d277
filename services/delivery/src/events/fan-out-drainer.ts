import { BackgroundWorker, type Logger, type PassResult, type Registry } from '@worklane/observability';
import type { FanOutBacklog } from '../data/fan-out-backlog';
import type { FanOutBudget } from './fan-out-budget';

export interface FanOutDrainerOptions {
  backlog: FanOutBacklog;
  budget: FanOutBudget;
  logger: Logger;
  registry?: Registry;
  /** Delay of the first attempt of the deliveries it creates. */
  firstDelayMs: number;
  /** How often the backlog is looked at when nothing wakes the drainer (events queued by other replicas). */
  idleMs: number;
  /** Called when deliveries are created, to send them without waiting for a poll. */
  onDeliveriesCreated: () => void;
}

/** The shortest wait between drains while teams wait for their budgets: their events go out in a few larger drains. */
const MIN_WAIT_MS = 20;

/**
 * Turns the events of the fan-out backlog into deliveries as each team's budget refills. Teams take
 * turns (the first team of a pass rotates), each drain takes what that team's budget covers, and a
 * team's events go in the order they were published (their stream sequence).
 */
export class FanOutDrainer {
  private readonly worker: BackgroundWorker;
  private turn = 0;

  constructor(private readonly options: FanOutDrainerOptions) {
    this.worker = new BackgroundWorker({ name: 'fan-out backlog', logger: options.logger, registry: options.registry, idleMs: options.idleMs, pass: () => this.pass() });
  }

  start(): void {
    this.worker.start();
  }

  /** Events were queued: look at the backlog now. */
  wake(): void {
    this.worker.wake();
  }

  stop(): Promise<boolean> {
    return this.worker.stop();
  }

  /** One turn of every waiting team. */
  async pass(): Promise<PassResult> {
    const { backlog, budget, firstDelayMs, idleMs } = this.options;
    const teams = await backlog.waitingTeams();
    budget.setWaiting(teams);
    if (teams.length === 0) return 'idle';
    const start = this.turn++ % teams.length;
    let created = 0;
    let moreNow = false;
    let waitMs = idleMs;
    for (const teamId of [...teams.slice(start), ...teams.slice(0, start)]) {
      const allowance = budget.available(teamId);
      if (allowance <= 0) {
        waitMs = Math.min(waitMs, budget.msUntilAvailable(teamId));
        continue;
      }
      const drained = await backlog.drain(teamId, allowance, firstDelayMs);
      if (drained.events === 0 && drained.more) {
        // Another replica is draining this team right now.
        waitMs = Math.min(waitMs, MIN_WAIT_MS);
        continue;
      }
      budget.spend(teamId, drained.deliveries);
      created += drained.deliveries;
      if (!drained.more) budget.stopWaiting(teamId);
      else if (budget.available(teamId) > 0) moreNow = true;
      else waitMs = Math.min(waitMs, budget.msUntilAvailable(teamId));
    }
    if (created > 0) this.options.onDeliveriesCreated();
    return moreNow ? 'more' : Math.max(MIN_WAIT_MS, waitMs);
  }
}
