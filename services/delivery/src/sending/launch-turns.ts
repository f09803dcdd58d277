/** DELIVERY_LAUNCHES_PER_TURN's default: attempts started in one turn of the event loop at most. */
export const DEFAULT_LAUNCHES_PER_TURN = 8;

/**
 * Bounds the attempts a replica starts in one turn of its event loop, and makes teams take turns
 * for them. Starting an attempt is synchronous work (the signature, the request, the connection,
 * and for TLS the handshake's first flight): a claim of a hundred deliveries, or a hundred
 * deliveries stored at once by one fan-out, would otherwise start them all in one turn, and
 * everything else the replica does (another team's event, its attempt, a response) would wait for
 * it. Past `perTurn` attempts in a turn, the rest wait for the next turns, one team's after
 * another's (round robin), so one team's burst delays another team's attempt by a turn at most.
 * The sending slots are taken before (SendingBudgets): this orders the starts, it limits nothing.
 */
export class LaunchTurns {
  private startedThisTurn = 0;
  private turnEndScheduled = false;
  /** Waiting starts per team; the Map's order is the teams' turn order. */
  private readonly waiting = new Map<number, (() => void)[]>();

  constructor(private readonly perTurn: number) {}

  /** Starts waiting, all teams together. */
  get queued(): number {
    let count = 0;
    for (const queue of this.waiting.values()) count += queue.length;
    return count;
  }

  /** Resolves when an attempt of `teamId` may start: at once while this turn has room and nobody waits. */
  next(teamId: number): Promise<void> {
    this.endTurnSoon();
    if (this.waiting.size === 0 && this.startedThisTurn < this.perTurn) {
      this.startedThisTurn += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const queue = this.waiting.get(teamId);
      if (queue) queue.push(resolve);
      else this.waiting.set(teamId, [resolve]);
    });
  }

  /** Ends the current turn once the event loop has run its other work (I/O, timers). */
  private endTurnSoon(): void {
    if (this.turnEndScheduled) return;
    this.turnEndScheduled = true;
    setImmediate(() => {
      this.turnEndScheduled = false;
      this.startedThisTurn = 0;
      this.startWaiting();
    });
  }

  /** Starts up to `perTurn` waiting attempts, one team's after another's. */
  private startWaiting(): void {
    while (this.startedThisTurn < this.perTurn && this.waiting.size > 0) {
      const [teamId, queue] = this.waiting.entries().next().value as [number, (() => void)[]];
      const start = queue.shift()!;
      // The team goes to the end of the turn order (or leaves it, with nothing left to start).
      this.waiting.delete(teamId);
      if (queue.length > 0) this.waiting.set(teamId, queue);
      this.startedThisTurn += 1;
      start();
    }
    if (this.waiting.size > 0 || this.startedThisTurn > 0) this.endTurnSoon();
  }
}
