import type pg from 'pg';

/** A team already holds as many of a resource as its quota allows. */
export class TeamQuotaExceededError extends Error {
  constructor(
    /** What is counted, in the plural: "webhooks", "API tokens". */
    readonly resource: string,
    readonly limit: number,
  ) {
    super(`The team has reached its limit of ${limit} ${resource}.`);
    this.name = 'TeamQuotaExceededError';
  }
}

export interface TeamQuota {
  /** What is counted, in the plural; also names the lock, so each resource has its own. */
  resource: string;
  teamId: number;
  limit: number;
  /** How many the team holds now, read with `client` inside the transaction. */
  count: (client: pg.PoolClient) => Promise<number>;
}

/**
 * Takes the team's lock for this resource until the surrounding transaction ends, then checks
 * the quota; throws TeamQuotaExceededError when the team is at its limit. Every create of the
 * resource takes the same lock before counting, so two concurrent creates cannot both see the
 * last free slot: the second counts after the first has committed (READ COMMITTED reads a new
 * snapshot per statement) or rolled back. Call it in the transaction that then inserts.
 */
export async function claimTeamQuota(client: pg.PoolClient, quota: TeamQuota): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`worklane.quota.${quota.resource}:${quota.teamId}`]);
  if ((await quota.count(client)) >= quota.limit) throw new TeamQuotaExceededError(quota.resource, quota.limit);
}
