import { SendingBudgets } from './budgets';
import { CircuitBreakers } from './circuit-breaker';

describe('SendingBudgets', () => {
  const limits = { total: 10, perTeam: 4, perWebhook: 2 };

  it('blocks a team at its budget and an endpoint at its own, and gives slots back once', () => {
    const budgets = new SendingBudgets(limits);
    const breakers = new CircuitBreakers({ failureThreshold: 1, coolDownMs: 1_000, maxCoolDownMs: 1_000 });
    const releases = [budgets.take(1, 10), budgets.take(1, 10), budgets.take(1, 11), budgets.take(1, 12), budgets.take(2, 20)];
    expect(budgets.claimBudget(100, breakers)).toEqual({
      limit: 5,
      perTeam: 4,
      perWebhook: 2,
      blockedTeams: [1],
      teamAllowances: [[2, 3]],
      blockedWebhooks: [10],
      webhookAllowances: [
        [11, 1],
        [12, 1],
        [20, 1],
      ],
    });
    expect(budgets.teamsAtBudget).toBe(1);
    releases[0]!();
    releases[0]!();
    expect(budgets.inFlight).toBe(4);
    expect(budgets.claimBudget(100, breakers).blockedTeams).toEqual([]);
  });

  it('blocks an endpoint with an open breaker and lets one probe through when it is half-open', () => {
    let now = 0;
    const budgets = new SendingBudgets(limits);
    // random 0.5: the wait is the cool-down itself, so it is over at 1,000 ms.
    const breakers = new CircuitBreakers({ failureThreshold: 1, coolDownMs: 1_000, maxCoolDownMs: 1_000, now: () => now, random: () => 0.5 });
    breakers.record(30, true);
    expect(budgets.claimBudget(100, breakers).blockedWebhooks).toEqual([30]);
    now = 1_000;
    expect(budgets.claimBudget(100, breakers).webhookAllowances).toEqual([[30, 1]]);
    const probe = budgets.take(3, 30);
    expect(budgets.claimBudget(100, breakers).blockedWebhooks).toEqual([30]);
    probe();
  });

  describe('a slot outside a claim (the fast path)', () => {
    it('is taken while the total, the team and the endpoint have room, and counts against the next claim', () => {
      const budgets = new SendingBudgets(limits);
      const breakers = new CircuitBreakers({ failureThreshold: 1, coolDownMs: 1_000, maxCoolDownMs: 1_000 });
      const first = budgets.takeIfRoom(1, 10, breakers);
      expect(first).toBeDefined();
      expect(budgets.inFlightOfTeam(1)).toBe(1);
      expect(budgets.claimBudget(100, breakers).teamAllowances).toEqual([[1, 3]]);
      first!();
      first!();
      expect(budgets.inFlight).toBe(0);
    });

    it('is refused to a team at its budget, leaving other teams theirs', () => {
      const budgets = new SendingBudgets(limits);
      const breakers = new CircuitBreakers({ failureThreshold: 1, coolDownMs: 1_000, maxCoolDownMs: 1_000 });
      for (const webhookId of [10, 10, 11, 12]) budgets.take(1, webhookId);
      expect(budgets.takeIfRoom(1, 13, breakers)).toBeUndefined();
      expect(budgets.inFlightOfTeam(1)).toBe(4);
      expect(budgets.takeIfRoom(2, 20, breakers)).toBeDefined();
    });

    it('is refused to an endpoint at its budget, when every slot is taken, and to an endpoint whose breaker is not closed', () => {
      let now = 0;
      const budgets = new SendingBudgets({ total: 3, perTeam: 3, perWebhook: 2 });
      // random 0.5: the wait is the cool-down itself, so it is over at 1,000 ms.
      const breakers = new CircuitBreakers({ failureThreshold: 1, coolDownMs: 1_000, maxCoolDownMs: 1_000, now: () => now, random: () => 0.5 });
      budgets.take(1, 10);
      budgets.take(1, 10);
      expect(budgets.takeIfRoom(1, 10, breakers)).toBeUndefined();
      breakers.record(11, true);
      expect(budgets.takeIfRoom(1, 11, breakers)).toBeUndefined();
      now = 1_000;
      // Half-open: its one probe goes through a claim.
      expect(budgets.takeIfRoom(1, 11, breakers)).toBeUndefined();
      budgets.take(2, 20);
      expect(budgets.takeIfRoom(3, 30, breakers)).toBeUndefined();
      expect(budgets.inFlight).toBe(3);
    });
  });
});
