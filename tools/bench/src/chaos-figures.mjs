// The chaos benchmark's plan and figures, apart from the run so they can be tested on their own.
import { percentile } from './stats.mjs';

/**
 * Which webhook of which team misbehaves how. Each team gets `perTeam` webhooks; the misbehaving
 * ones (`failing`, then `slow`, then `limited`) are dealt to the teams in turn, so they share teams
 * with healthy ones. In each team that keeps at least two healthy webhooks, the last one is scoped
 * to one of the team's projects (`filtered`). Returns one entry per webhook:
 * { team, slot, kind: 'healthy'|'failing'|'slow'|'limited', filtered }.
 */
export function planWebhooks({ teams, perTeam, failing, slow, limited }) {
  if (teams < 1 || perTeam < 1) throw new Error('at least one team with one webhook');
  const plan = Array.from({ length: teams }, (_, team) => Array.from({ length: perTeam }, (_, slot) => ({ team, slot, kind: 'healthy', filtered: false })));
  const chaos = [...Array(failing).fill('failing'), ...Array(slow).fill('slow'), ...Array(limited).fill('limited')];
  chaos.forEach((kind, c) => {
    const team = c % teams;
    const free = plan[team].find((webhook) => webhook.kind === 'healthy');
    if (!free) throw new Error(`team ${team} has no room for a ${kind} webhook: more misbehaving webhooks than ${perTeam} per team allows`);
    free.kind = kind;
  });
  for (const webhooks of plan) {
    const healthy = webhooks.filter((webhook) => webhook.kind === 'healthy');
    if (healthy.length >= 2) healthy[healthy.length - 1].filtered = true;
  }
  return plan.flat();
}

/** p50, p99 and max of a list of numbers (any order). */
export function spread(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
}

/** The members of `expected` (an iterable) that `received` (a Set or Map) does not have. */
export const missingFrom = (expected, received) => [...expected].filter((item) => !received.has(item));

/**
 * Deliveries that arrived out of their issue's commit order: `arrivals` is one endpoint's list of
 * [issue, sequence] in the order they arrived; each arrival with a lower sequence than one of the
 * same issue that arrived before it counts once.
 */
export function orderViolations(arrivals) {
  const highest = new Map();
  let violations = 0;
  for (const [issue, sequence] of arrivals) {
    const before = highest.get(issue);
    if (before !== undefined && sequence < before) violations += 1;
    else highest.set(issue, sequence);
  }
  return violations;
}

/**
 * The most requests a rate limit of `perSecond` lets an endpoint receive in `windowMs`: its token
 * bucket holds one second's worth (`perSecond`) and refills at `perSecond`, so any interval of t
 * seconds, both ends included, holds at most perSecond × (1 + t) requests. busiestWindow counts
 * windows [t, t + windowMs), end left out, where a sender keeping exactly to the bucket puts one
 * request fewer at most (for whole requests per window); the one to spare is room for a request
 * that took longer on its way to the receiver than the one after it.
 */
export const limitBound = (perSecond, windowMs) => Math.floor(perSecond * (1 + windowMs / 1000));

/** The most timestamps (ms) that fall within any `windowMs` (a window [t, t + windowMs)). */
export function busiestWindow(times, windowMs = 1_000) {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while (sorted[end] - sorted[start] >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
