import type { CircuitBreakers } from './circuit-breaker';

export interface BudgetLimits {
  /** Attempts in flight in this replica, all teams together. */
  total: number;
  /** Attempts in flight for one team. */
  perTeam: number;
  /** Attempts in flight to one endpoint (webhook). */
  perWebhook: number;
}

/** What the next claim may take: the store turns it into one fair query. */
export interface ClaimBudget {
  /** Deliveries to claim at most. */
  limit: number;
  /** Attempts a team may start when it has none in flight. */
  perTeam: number;
  /** Attempts an endpoint may start when it has none in flight. */
  perWebhook: number;
  /** Teams at their budget: nothing of theirs is claimed. */
  blockedTeams: number[];
  /** Teams partly using their budget, with what is left. */
  teamAllowances: [teamId: number, left: number][];
  /** Endpoints at their budget, or with an open breaker (or a probe in flight): nothing is claimed for them. */
  blockedWebhooks: number[];
  /** Endpoints partly using their budget, or half-open (one probe), with what is left. */
  webhookAllowances: [webhookId: number, left: number][];
}

const increment = (map: Map<number, number>, key: number, by: number) => {
  const value = (map.get(key) ?? 0) + by;
  if (value > 0) map.set(key, value);
  else map.delete(key);
};

/**
 * The concurrency budgets of one replica: attempts in flight in total, per team and per endpoint.
 * A team can never hold more than its share of the sending slots, however many endpoints it
 * points at slow or dead receivers, so another team's deliveries always find a free slot.
 */
export class SendingBudgets {
  private readonly byTeam = new Map<number, number>();
  private readonly byWebhook = new Map<number, number>();
  private total = 0;

  constructor(readonly limits: BudgetLimits) {}

  get inFlight(): number {
    return this.total;
  }

  get free(): number {
    return Math.max(0, this.limits.total - this.total);
  }

  /** Teams with attempts in flight. */
  get teamsSending(): number {
    return this.byTeam.size;
  }

  /** Teams that have used their whole budget. */
  get teamsAtBudget(): number {
    let count = 0;
    for (const value of this.byTeam.values()) if (value >= this.limits.perTeam) count += 1;
    return count;
  }

  inFlightOf(webhookId: number): number {
    return this.byWebhook.get(webhookId) ?? 0;
  }

  inFlightOfTeam(teamId: number): number {
    return this.byTeam.get(teamId) ?? 0;
  }

  /** Counts an attempt; the returned function gives its slot back (once). */
  take(teamId: number, webhookId: number): () => void {
    this.total += 1;
    increment(this.byTeam, teamId, 1);
    increment(this.byWebhook, webhookId, 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      increment(this.byTeam, teamId, -1);
      increment(this.byWebhook, webhookId, -1);
    };
  }

  /**
   * Takes a slot for an attempt outside a claim (the fan-out's fast path) when the total, the
   * team's and the endpoint's budgets all have room and the endpoint's breaker is closed; the
   * returned function gives it back (once). Undefined, taking nothing, otherwise.
   */
  takeIfRoom(teamId: number, webhookId: number, breakers: CircuitBreakers): (() => void) | undefined {
    if (this.atBudget(teamId, webhookId)) return undefined;
    if (breakers.state(webhookId) !== 'closed') return undefined;
    return this.take(teamId, webhookId);
  }

  /** Whether the team has its whole budget in use. */
  teamAtBudget(teamId: number): boolean {
    return this.inFlightOfTeam(teamId) >= this.limits.perTeam;
  }

  /**
   * Whether an attempt of this team and endpoint finds no room: the replica's, the team's or the
   * endpoint's budget is in use to the full. A slot of theirs given back then lets a claim take
   * what the budgets held back until now.
   */
  atBudget(teamId: number, webhookId: number): boolean {
    return this.free <= 0 || this.teamAtBudget(teamId) || this.inFlightOf(webhookId) >= this.limits.perWebhook;
  }

  /** The budget of the next claim of at most `batch` deliveries, with the breakers' verdicts. */
  claimBudget(batch: number, breakers: CircuitBreakers): ClaimBudget {
    const { perTeam, perWebhook } = this.limits;
    const blockedTeams: number[] = [];
    const teamAllowances: [number, number][] = [];
    for (const [teamId, count] of this.byTeam) {
      if (count >= perTeam) blockedTeams.push(teamId);
      else teamAllowances.push([teamId, perTeam - count]);
    }
    const blockedWebhooks: number[] = [];
    const webhookAllowances: [number, number][] = [];
    const seen = new Set<number>();
    for (const health of breakers.notClosed()) {
      seen.add(health.webhookId);
      // Half-open: one probe, and only when nothing else is in flight to it.
      if (health.state === 'half_open' && this.inFlightOf(health.webhookId) === 0) webhookAllowances.push([health.webhookId, 1]);
      else blockedWebhooks.push(health.webhookId);
    }
    for (const [webhookId, count] of this.byWebhook) {
      if (seen.has(webhookId)) continue;
      if (count >= perWebhook) blockedWebhooks.push(webhookId);
      else webhookAllowances.push([webhookId, perWebhook - count]);
    }
    return { limit: Math.min(batch, this.free), perTeam, perWebhook, blockedTeams, teamAllowances, blockedWebhooks, webhookAllowances };
  }
}
