import { timestamp, withTransaction, type Pool } from '@worklane/db';
import type { EventHeader } from '../domain/delivery';
import type { DeliveryStore, EventFanOut } from './deliveries';

/** What one drain of a team's backlog did. */
export interface Drained {
  events: number;
  deliveries: number;
  /** Events of the team still waiting. */
  more: boolean;
}

interface BacklogRow {
  seq: string;
  stream_seq: string;
  issue_id: string | null;
  event_id: string;
  event: EventHeader['event'];
  team_id: string;
  body: Buffer;
  trace_context: Record<string, string> | null;
  event_created_at: string;
  webhook_ids: string[];
}

/** Events read per drain of one team, at most. */
const DRAIN_BATCH = 200;

/**
 * Events waiting for their team's fan-out budget: one row per event with the webhooks it goes to
 * (those subscribed, and whose scope held it, when the event arrived), drained into deliveries in
 * the order the events were published (their stream sequence), whichever batch or replica stored
 * them. The deliveries keep the event's issue and stream sequence, for the per-issue order.
 */
export class FanOutBacklog {
  constructor(
    private readonly pool: Pool,
    private readonly deliveries: DeliveryStore,
  ) {}

  /** Stores events to fan out later; an event already waiting is left as it is. */
  async queue(events: EventFanOut[]): Promise<void> {
    if (events.length === 0) return;
    await this.pool.query({
      name: 'fanout-backlog-queue',
      text: `INSERT INTO fanout_backlog (stream_seq, team_id, event_id, event, body, trace_context, event_created_at, webhook_ids, issue_id)
       SELECT e.stream_seq, e.team_id, e.event_id, e.event, e.body, e.trace_context::jsonb, e.event_created_at, string_to_array(e.webhook_ids, ',')::bigint[], e.issue_id
       FROM unnest($8::bigint[], $1::bigint[], $2::uuid[], $3::text[], $4::bytea[], $5::text[], $6::timestamptz[], $7::text[], $9::bigint[])
         AS e (stream_seq, team_id, event_id, event, body, trace_context, event_created_at, webhook_ids, issue_id)
       ORDER BY e.stream_seq
       ON CONFLICT (event_id) DO NOTHING`,
      values: [
        events.map(({ event }) => event.team_id),
        events.map(({ event }) => event.id),
        events.map(({ event }) => event.event),
        events.map(({ body }) => body),
        events.map(({ traceContext }) => JSON.stringify(traceContext)),
        events.map(({ event }) => event.created_at),
        events.map(({ webhookIds }) => webhookIds.join(',')),
        events.map(({ streamSequence }) => streamSequence ?? 0),
        events.map(({ event }) => event.issue_id ?? null),
      ],
    });
  }

  /** The teams with events waiting, found by a skip scan of the team index (no read of the rows). */
  async waitingTeams(): Promise<number[]> {
    const { rows } = await this.pool.query<{ team_id: string }>({
      name: 'fanout-backlog-teams',
      text: `WITH RECURSIVE teams (team_id) AS (
         (SELECT team_id FROM fanout_backlog ORDER BY team_id LIMIT 1)
         UNION ALL
         SELECT (SELECT b.team_id FROM fanout_backlog AS b WHERE b.team_id > t.team_id ORDER BY b.team_id LIMIT 1)
         FROM teams AS t WHERE t.team_id IS NOT NULL
       )
       SELECT team_id FROM teams WHERE team_id IS NOT NULL`,
    });
    return rows.map((row) => Number(row.team_id));
  }

  /** Events waiting, all teams together. */
  async size(): Promise<number> {
    const { rows } = await this.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM fanout_backlog');
    return rows[0]?.count ?? 0;
  }

  /**
   * Creates the deliveries of a team's oldest waiting events, as many events as `allowance`
   * deliveries cover (at least one), and removes those events, in one transaction. One drain per
   * team at a time across replicas (an advisory lock), so a team's events keep their order; a team
   * another replica is draining is skipped.
   */
  async drain(teamId: number, allowance: number, firstDelayMs: number): Promise<Drained> {
    return withTransaction(this.pool, async (client) => {
      const { rows: locked } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock(hashtext('worklane.fanout_backlog'), hashtext($1::text)) AS locked`, [
        String(teamId),
      ]);
      if (!locked[0]?.locked) return { events: 0, deliveries: 0, more: true };
      const limit = Math.max(1, Math.min(DRAIN_BATCH, Math.ceil(allowance)));
      const { rows } = await client.query<BacklogRow>({
        name: 'fanout-backlog-oldest',
        text: `SELECT seq, stream_seq, issue_id, event_id, event, team_id, body, trace_context, ${timestamp('event_created_at')}, webhook_ids
         FROM fanout_backlog WHERE team_id = $1 ORDER BY stream_seq, seq LIMIT $2`,
        values: [teamId, limit],
      });
      const taken: BacklogRow[] = [];
      let deliveries = 0;
      for (const row of rows) {
        if (taken.length > 0 && deliveries + row.webhook_ids.length > allowance) break;
        taken.push(row);
        deliveries += row.webhook_ids.length;
      }
      if (taken.length === 0) return { events: 0, deliveries: 0, more: false };
      await this.deliveries.createForEvents(
        taken.map((row) => ({
          event: {
            id: row.event_id,
            event: row.event,
            created_at: row.event_created_at,
            team_id: Number(row.team_id),
            ...(row.issue_id === null ? {} : { issue_id: Number(row.issue_id) }),
          },
          body: row.body,
          traceContext: row.trace_context ?? {},
          webhookIds: row.webhook_ids.map(Number),
          firstDelayMs,
          streamSequence: Number(row.stream_seq),
        })),
        client,
      );
      await client.query({ name: 'fanout-backlog-remove', text: 'DELETE FROM fanout_backlog WHERE seq = ANY($1::bigint[])', values: [taken.map((row) => row.seq)] });
      return { events: taken.length, deliveries, more: taken.length < rows.length || rows.length === limit };
    });
  }
}
