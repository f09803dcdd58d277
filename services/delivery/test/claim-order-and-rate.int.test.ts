// The claim's per-issue order and per-endpoint rate limits against a real PostgreSQL, with two
// stores on two pools standing for two delivery replicas. Time is moved by rewriting rows (a
// retry made due, a delivery made older), never by sleeping.
import { randomUUID } from 'node:crypto';
import type { Pool } from '@worklane/db';
import { createServiceDatabase, type ServiceDatabase } from '@worklane/testing';
import { DeliveryStore, type AttemptOutcome, type ClaimedDelivery, type EventFanOut } from '../src/data/deliveries';
import { EndpointRateStore } from '../src/data/endpoint-rates';
import { openClaimBudget } from './support/claim-budget';

jest.setTimeout(60_000);

let database: ServiceDatabase;
let pools: Pool[] = [];
let replicaA: DeliveryStore;
let replicaB: DeliveryStore;
let rates: EndpointRateStore;
let pool: Pool;

const WAIT_MS = 60_000;

beforeAll(async () => {
  database = await createServiceDatabase('delivery');
  pools = ['a', 'b', 'test'].map((name) => database.pool(`claim-controls-${name}`));
  [replicaA, replicaB] = [new DeliveryStore(pools[0]!, { orderWaitMs: WAIT_MS }), new DeliveryStore(pools[1]!, { orderWaitMs: WAIT_MS })];
  pool = pools[2]!;
  rates = new EndpointRateStore(pool);
}, 60_000);
afterAll(async () => {
  await database?.drop();
});

let nextTeam = 100;
let nextSequence = 1;
/** A team of its own per test, so the claims of one test never see another's deliveries. */
const newTeam = () => nextTeam++;

const budget = (limit = 100) => openClaimBudget({ limit });

/** An event of `issueId` (published next in the stream) to `webhookIds`. */
function event(teamId: number, issueId: number, webhookIds: number[]): EventFanOut {
  const sequence = nextSequence++;
  return {
    event: { id: randomUUID(), event: 'issue.updated', created_at: '2026-11-23T10:00:00.000000Z', team_id: teamId, issue_id: issueId },
    body: Buffer.from(JSON.stringify({ sequence, issue: issueId })),
    traceContext: {},
    webhookIds,
    firstDelayMs: 0,
    streamSequence: sequence,
  };
}

const sequenceOf = (delivery: ClaimedDelivery) => (JSON.parse(delivery.body.toString('utf8')) as { sequence: number }).sequence;
const issueOf = (delivery: ClaimedDelivery) => (JSON.parse(delivery.body.toString('utf8')) as { issue: number }).issue;

const outcome = (status: AttemptOutcome['status'], retryInMs: number | null = null): AttemptOutcome => ({
  startedAtMs: Date.now(),
  url: 'https://receiver.example/hook',
  statusCode: status === 'succeeded' ? 200 : 500,
  error: null,
  durationMs: 5,
  responseBody: null,
  status,
  failureReason: status === 'failed' ? 'exhausted' : null,
  retryInMs,
});

const claimFor = async (store: DeliveryStore, teamId: number, limit = 100) =>
  (await store.claimDue(budget(limit), 30_000)).deliveries.filter((delivery) => delivery.teamId === teamId);

const row = async (id: string) =>
  (
    await pool.query<{ status: string; out_of_order: boolean; rate_paced: boolean; due_in_ms: number; attempt_count: number }>(
      `SELECT status, out_of_order, rate_paced, attempt_count, (extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS due_in_ms FROM deliveries WHERE id = $1`,
      [id],
    )
  ).rows[0]!;

const deliveryIdsOf = async (teamId: number, webhookId: number) =>
  (await pool.query<{ id: string; seq: string }>(`SELECT id, stream_seq AS seq FROM deliveries WHERE team_id = $1 AND webhook_id = $2 ORDER BY stream_seq`, [teamId, webhookId]))
    .rows;

describe('per-issue order', () => {
  it("claims an issue's next event for a webhook only once the earlier one is finished; other issues and webhooks do not wait", async () => {
    const team = newTeam();
    const first = event(team, 1, [11, 12]);
    const second = event(team, 1, [11]);
    const other = event(team, 2, [11]);
    await replicaA.createForEvents([first, second, other]);

    const claimed = await claimFor(replicaA, team);
    // Issue 1's first event to both webhooks and issue 2's event; issue 1's second waits behind its first.
    expect(claimed.map((delivery) => `${issueOf(delivery)}:${sequenceOf(delivery)}->${delivery.webhookId}`).sort()).toEqual(
      [`1:${first.streamSequence}->11`, `1:${first.streamSequence}->12`, `2:${other.streamSequence}->11`].sort(),
    );
    // The other replica does not take it either while the first is being attempted.
    expect(await claimFor(replicaB, team)).toEqual([]);

    // The first fails and will be retried in a minute: the second is put off with it, not read by every claim.
    const earlier = claimed.find((delivery) => delivery.webhookId === 11 && issueOf(delivery) === 1)!;
    await replicaA.recordAttempts([{ delivery: earlier, outcome: outcome('pending', 60_000) }]);
    const [waiting] = (await deliveryIdsOf(team, 11)).filter((delivery) => Number(delivery.seq) === second.streamSequence);
    expect((await row(waiting!.id)).due_in_ms).toBeGreaterThan(30_000);
    expect(await claimFor(replicaB, team)).toEqual([]);

    // Its retry is due and succeeds: the second goes next, at once.
    await pool.query(`UPDATE deliveries SET next_attempt_at = now() WHERE id = $1`, [earlier.id]);
    const [retry] = await claimFor(replicaB, team);
    expect(retry?.id).toBe(earlier.id);
    await replicaB.recordAttempts([{ delivery: retry!, outcome: outcome('succeeded') }]);
    const [next] = await claimFor(replicaA, team);
    expect(next && sequenceOf(next)).toBe(second.streamSequence);
    expect((await row(next!.id)).out_of_order).toBe(false);
  });

  it('lets a later event go ahead once it has waited DELIVERY_ORDER_WAIT_MAX_MS, and marks it out_of_order', async () => {
    const team = newTeam();
    const first = event(team, 7, [21]);
    const second = event(team, 7, [21]);
    await replicaA.createForEvents([first, second]);
    const [earlier] = await claimFor(replicaA, team);
    expect(earlier && sequenceOf(earlier)).toBe(first.streamSequence);
    await replicaA.recordAttempts([{ delivery: earlier!, outcome: outcome('pending', 3_600_000) }]);
    expect(await claimFor(replicaA, team)).toEqual([]);

    // The second has waited its whole bound (its row made older, and due).
    const laterId = (await deliveryIdsOf(team, 21)).find((delivery) => Number(delivery.seq) === second.streamSequence)!.id;
    await pool.query(`UPDATE deliveries SET created_at = now() - make_interval(secs => $2), next_attempt_at = now() WHERE id = $1`, [laterId, WAIT_MS / 1000 + 1]);
    const [later] = await claimFor(replicaB, team);
    expect(later?.id).toBe(laterId);
    expect(await row(laterId)).toMatchObject({ out_of_order: true });
    // The earlier one is still pending, for its retry.
    expect(await row(earlier!.id)).toMatchObject({ status: 'pending', out_of_order: false });
  });

  it('keeps no order when the bound is 0', async () => {
    const team = newTeam();
    const unordered = new DeliveryStore(pools[0]!, { orderWaitMs: 0 });
    await unordered.createForEvents([event(team, 3, [31]), event(team, 3, [31])]);
    expect(await claimFor(unordered, team)).toHaveLength(2);
  });

  it("two replicas claiming side by side attempt each issue's events in stream order, one at a time", async () => {
    const team = newTeam();
    const events = [];
    // Ten issues with four events each, interleaved as commits of several issues are.
    for (let round = 0; round < 4; round++) for (let issue = 100; issue < 110; issue++) events.push(event(team, issue, [41]));
    await replicaA.createForEvents(events);
    const attempted = new Map<number, number[]>();
    let inFlight = new Set<number>();
    for (let pass = 0; pass < 40 && [...attempted.values()].flat().length < events.length; pass++) {
      const [a, b] = await Promise.all([claimFor(replicaA, team, 7), claimFor(replicaB, team, 7)]);
      const claimed = [...a, ...b];
      for (const delivery of claimed) {
        // Never two events of one issue at once.
        expect(inFlight.has(issueOf(delivery))).toBe(false);
        inFlight.add(issueOf(delivery));
        attempted.set(issueOf(delivery), [...(attempted.get(issueOf(delivery)) ?? []), sequenceOf(delivery)]);
      }
      await Promise.all([
        replicaA.recordAttempts(a.map((delivery) => ({ delivery, outcome: outcome('succeeded') }))),
        replicaB.recordAttempts(b.map((delivery) => ({ delivery, outcome: outcome('succeeded') }))),
      ]);
      inFlight = new Set();
    }
    expect([...attempted.values()].flat()).toHaveLength(events.length);
    for (const [issue, sequences] of attempted) {
      const published = events.filter((each) => each.event.issue_id === issue).map((each) => each.streamSequence);
      expect(sequences).toEqual(published);
    }
  });
});

describe('per-endpoint rate limits', () => {
  /** Moves an endpoint's bucket of attempts a second into the past, as if a second went by. */
  const aSecondPasses = async (webhookId: number) => {
    await pool.query(`UPDATE endpoint_rate_limits SET started_at = started_at - interval '1 second' WHERE webhook_id = $1`, [webhookId]);
  };

  it("starts a limited endpoint's bucket of deliveries, paces the rest a sending time apart, and leaves other endpoints alone", async () => {
    const team = newTeam();
    await rates.setLimits([{ webhookId: 51, teamId: team, perSecond: 5 }]);
    const events = Array.from({ length: 30 }, (_, index) => event(team, 1_000 + index, [51, 52]));
    await replicaA.createForEvents(events);

    const result = await replicaA.claimDue(budget(), 30_000);
    const claimed = result.deliveries.filter((delivery) => delivery.teamId === team);
    const limited = claimed.filter((delivery) => delivery.webhookId === 51);
    // The claim says when the first delivery it held back is due, so the sender wakes for it.
    const dbNow = (await pool.query<{ now: number }>('SELECT (extract(epoch FROM now()) * 1000)::float8 AS now')).rows[0]!.now;
    expect(result.pacedDueAtMs).not.toBeNull();
    expect(result.pacedDueAtMs! - dbNow).toBeLessThanOrEqual(200);
    // A full bucket: a second's worth. The unlimited endpoint gets all of its deliveries.
    expect(limited).toHaveLength(5);
    expect(claimed.filter((delivery) => delivery.webhookId === 52)).toHaveLength(30);

    // The other 25 wait in the table, pending and unclaimed, given sending times 1/5 s apart.
    const { rows: paced } = await pool.query<{ due_in_ms: number; lease_token: string | null; attempt_count: number }>(
      `SELECT (extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS due_in_ms, lease_token, attempt_count
       FROM deliveries WHERE team_id = $1 AND webhook_id = 51 AND rate_paced ORDER BY next_attempt_at`,
      [team],
    );
    expect(paced).toHaveLength(25);
    expect(paced.every((delivery) => delivery.lease_token === null && delivery.attempt_count === 0)).toBe(true);
    const gaps = paced.slice(1).map((delivery, index) => delivery.due_in_ms - paced[index]!.due_in_ms);
    for (const gap of gaps) expect(gap).toBeCloseTo(200, 0);
    // The last goes about five seconds from now (25 at 5 a second), never sooner.
    expect(paced.at(-1)!.due_in_ms).toBeGreaterThan(4_500);
    expect(paced.at(-1)!.due_in_ms).toBeLessThanOrEqual(5_000);
    // Nothing more of it can be claimed now, by either replica.
    expect((await claimFor(replicaB, team)).filter((delivery) => delivery.webhookId === 51)).toEqual([]);

    // Paced deliveries go when due without booking again, within the bucket of attempts: make three
    // of them due, and a second pass for that bucket.
    await pool.query(
      `UPDATE deliveries SET next_attempt_at = now() WHERE id IN (SELECT id FROM deliveries WHERE team_id = $1 AND webhook_id = 51 AND rate_paced ORDER BY next_attempt_at LIMIT 3)`,
      [team],
    );
    await aSecondPasses(51);
    const late = (await claimFor(replicaB, team)).filter((delivery) => delivery.webhookId === 51);
    expect(late).toHaveLength(3);
    expect(late.every((delivery) => delivery.ratePerSecond === 5)).toBe(true);
    // The 22 others kept their times: none was booked twice.
    expect((await pool.query(`SELECT 1 FROM deliveries WHERE team_id = $1 AND webhook_id = 51 AND rate_paced`, [team])).rowCount).toBe(22);
  });

  it('starts no more than the bucket holds when sending times come due late, all at once', async () => {
    const team = newTeam();
    await rates.setLimits([{ webhookId: 81, teamId: team, perSecond: 2 }]);
    await replicaA.createForEvents(Array.from({ length: 10 }, (_, index) => event(team, 5_000 + index, [81])));
    const startedAt = (await pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;
    expect(await claimFor(replicaA, team)).toHaveLength(2);
    // The senders came back long after the eight booked times (a busy replica): all are due at once.
    await pool.query(`UPDATE deliveries SET next_attempt_at = now() WHERE team_id = $1 AND webhook_id = 81 AND rate_paced`, [team]);
    const rightAway = (await Promise.all([claimFor(replicaA, team), claimFor(replicaB, team)])).flat();
    const elapsed = await pool.query<{ seconds: number }>('SELECT extract(epoch FROM clock_timestamp() - $1::timestamptz)::float8 AS seconds', [startedAt]);
    // Only what the bucket of attempts refilled since the first claim, not the eight.
    expect(rightAway.length).toBeLessThanOrEqual(Math.floor(elapsed.rows[0]!.seconds * 2));
    // A second later (the bucket full again: two), two more; the rest still wait, due, unclaimed.
    await aSecondPasses(81);
    expect(await claimFor(replicaB, team)).toHaveLength(2);
    const { rows } = await pool.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM deliveries WHERE team_id = $1 AND webhook_id = 81 AND status = 'pending' AND lease_token IS NULL`,
      [team],
    );
    expect(rows[0]!.waiting).toBe(10 - 4 - rightAway.length);
  });

  it('books a new sending time for a paced delivery whose lease ran out, rather than sending it again for free', async () => {
    const team = newTeam();
    await rates.setLimits([{ webhookId: 91, teamId: team, perSecond: 1 }]);
    await replicaA.createForEvents(Array.from({ length: 3 }, (_, index) => event(team, 6_000 + index, [91])));
    expect(await claimFor(replicaA, team)).toHaveLength(1);
    // The first paced delivery comes due and is claimed by a sender that dies at once (a lease of 0).
    await pool.query(
      `UPDATE deliveries SET next_attempt_at = now() WHERE id = (SELECT id FROM deliveries WHERE team_id = $1 AND webhook_id = 91 AND rate_paced ORDER BY next_attempt_at LIMIT 1)`,
      [team],
    );
    await aSecondPasses(91);
    const dying = (await replicaA.claimDue(budget(), 0)).deliveries.filter((delivery) => delivery.teamId === team);
    expect(dying).toHaveLength(1);
    // Its lease is over and it is due again, but no longer on a booked time: it is paced again.
    await aSecondPasses(91);
    expect(await claimFor(replicaB, team)).toEqual([]);
    const { rows } = await pool.query<{ rate_paced: boolean; due_in_ms: number }>(
      `SELECT rate_paced, (extract(epoch FROM next_attempt_at - now()) * 1000)::float8 AS due_in_ms FROM deliveries WHERE id = $1`,
      [dying[0]!.id],
    );
    expect(rows[0]!.rate_paced).toBe(true);
    expect(rows[0]!.due_in_ms).toBeGreaterThan(0);
  });

  it('shares one bucket between two replicas claiming at the same time', async () => {
    const team = newTeam();
    await rates.setLimits([{ webhookId: 61, teamId: team, perSecond: 2 }]);
    await replicaA.createForEvents(Array.from({ length: 40 }, (_, index) => event(team, 2_000 + index, [61])));
    const startedAt = (await pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now;
    let claimed = 0;
    for (let round = 0; round < 10; round++) {
      const both = await Promise.all([claimFor(replicaA, team), claimFor(replicaB, team)]);
      claimed += both.flat().length;
    }
    const elapsed = await pool.query<{ seconds: number }>('SELECT extract(epoch FROM clock_timestamp() - $1::timestamptz)::float8 AS seconds', [startedAt]);
    const elapsedSeconds = elapsed.rows[0]!.seconds;
    // A full bucket (2) and what it refilled meanwhile, whatever the two replicas did.
    expect(claimed).toBeGreaterThanOrEqual(2);
    expect(claimed).toBeLessThanOrEqual(2 + Math.floor(elapsedSeconds * 2) + 1);
    // Every delivery not claimed waits with a sending time of its own, at most one bucket a second.
    const { rows } = await pool.query<{ paced: number; distinct_times: number }>(
      `SELECT count(*)::int AS paced, count(DISTINCT next_attempt_at)::int AS distinct_times FROM deliveries WHERE team_id = $1 AND webhook_id = 61 AND rate_paced`,
      [team],
    );
    expect(rows[0]).toEqual({ paced: 40 - claimed, distinct_times: 40 - claimed });
  });

  it('paces again at the new rate when the limit changes, and not at all once it is removed', async () => {
    const team = newTeam();
    await rates.setLimits([{ webhookId: 71, teamId: team, perSecond: 1 }]);
    await replicaA.createForEvents(Array.from({ length: 10 }, (_, index) => event(team, 3_000 + index, [71])));
    expect(await claimFor(replicaA, team)).toHaveLength(1);
    // Nine wait, the last about nine seconds away.
    const latest = async () =>
      (
        await pool.query<{ due_in_ms: number }>(
          `SELECT (extract(epoch FROM max(next_attempt_at) - now()) * 1000)::float8 AS due_in_ms FROM deliveries WHERE team_id = $1 AND webhook_id = 71 AND status = 'pending' AND lease_token IS NULL`,
          [team],
        )
      ).rows[0]!.due_in_ms;
    expect(await latest()).toBeGreaterThan(8_000);

    // Unchanged: nothing moves.
    expect(await rates.setLimits([{ webhookId: 71, teamId: team, perSecond: 1 }])).toBe(0);
    // Raised to 100 a second: the nine are due again and go in one claim.
    expect(await rates.setLimits([{ webhookId: 71, teamId: team, perSecond: 100 }])).toBe(1);
    expect(await claimFor(replicaB, team)).toHaveLength(9);

    await replicaA.createForEvents(Array.from({ length: 5 }, (_, index) => event(team, 4_000 + index, [71])));
    await rates.setLimits([{ webhookId: 71, teamId: team, perSecond: null }]);
    expect((await pool.query('SELECT 1 FROM endpoint_rate_limits WHERE webhook_id = 71')).rowCount).toBe(0);
    expect(await claimFor(replicaB, team)).toHaveLength(5);
  });
});
