import type { ClaimBudget } from '../../src/sending/budgets';

/** A claim's budget that holds nothing back (100 deliveries, 100 per team and per endpoint) but what `overrides` say. */
export function openClaimBudget(overrides: Partial<ClaimBudget> = {}): ClaimBudget {
  return { limit: 100, perTeam: 100, perWebhook: 100, blockedTeams: [], teamAllowances: [], blockedWebhooks: [], webhookAllowances: [], ...overrides };
}
