import { randomUUID } from 'node:crypto';
import { boundedPageQuery, timestamp, withTransaction, type InSameTransaction, type Pool, type PoolClient, type Queryable } from '@worklane/db';
import { ISSUE_EVENT_SUBJECTS, type IssueEventName } from '@worklane/messaging/event-subjects';
import { captureTraceContext } from '@worklane/messaging/trace-context';
import { diffIssue, EDITABLE_FIELDS, newIssueValues, type CreateIssueInput, type Issue, type IssueChanges, type UpdateIssueInput } from '../domain/issue';

/** Where an issue lives; every query is scoped by all three so that ids from elsewhere find nothing. */
export interface ProjectScope {
  teamId: number;
  organizationId: number;
  projectId: number;
}

/** Wakes the outbox relays once the transaction that wrote an event commits. */
export const OUTBOX_CHANNEL = 'issue_outbox';

/** An outbox row as the relay publishes it. */
export interface OutboxEvent {
  id: string;
  subject: string;
  /** The event in the flat form (see writeEventAndReturn); the relay publishes its envelope. */
  payload: string;
  trace_context: Record<string, string> | null;
  created_at: Date;
  /** The issue of the event (set from the payload as the row is written). */
  order_key: string | null;
}

/**
 * Where the issue.created events of this process go once their create has committed: its own
 * relay, which publishes them at once. Their rows are written already leased to it for
 * `leaseSeconds`, so no other relay takes them meanwhile; should the process die before
 * publishing, the lease runs out and any relay publishes them.
 */
export interface CommittedEventPublisher {
  leaseSeconds: number;
  /** False while the relay cannot publish (NATS away): creates then leave their events to the queue. */
  ready(): boolean;
  publish(event: OutboxEvent): void;
}

const ISSUE_COLUMNS = [
  'id',
  'project_id',
  'number',
  'reference_code',
  'title',
  'description',
  'url',
  'type',
  'status',
  'priority',
  'assigned_to',
  `to_char(estimated_date, 'YYYY-MM-DD') AS estimated_date`,
  'created_by',
  timestamp('created_at'),
  timestamp('updated_at'),
].join(', ');

const SCOPE = 'team_id = $1 AND organization_id = $2 AND project_id = $3';

/** The octets of an issue's text: less than its JSON, so a page read by them misses no issue that fits. */
const ISSUE_TEXT_BYTES = 'octet_length(title) + coalesce(octet_length(description), 0) + coalesce(octet_length(url), 0)';

/** A page of a project's issues, newest first: $4 the cursor, $5 the row bound, $6 the byte budget. */
const ISSUE_PAGE = boundedPageQuery({
  columns: ISSUE_COLUMNS,
  table: 'issues',
  where: `${SCOPE} AND ($4::bigint IS NULL OR id < $4)`,
  orderBy: 'id DESC',
  limit: '$5',
  rowBytes: ISSUE_TEXT_BYTES,
  maxBytes: '$6',
});

/** ISSUE_UPDATE_OPTIMISTIC_ATTEMPTS's default. */
const DEFAULT_OPTIMISTIC_UPDATE_ATTEMPTS = 3;

export interface IssueStoreOptions {
  /**
   * Compare-and-set writes one update tries (each reads the issue again after a concurrent update
   * changed it in between) before it works the update out under the issue's row lock; 0: always
   * under the row lock. 3 unless given (ISSUE_UPDATE_OPTIMISTIC_ATTEMPTS).
   */
  optimisticUpdateAttempts?: number;
}

/**
 * The CTE `event` that writes the event of the change in CTE `changed` to the outbox, and the
 * final SELECT that returns the issue and wakes the relays at commit. The payload is built here, in
 * the statement that makes the change, from the same columns the API returns: the webhook body of
 * docs/webhooks.md as compact JSON, `{"id", "event", "created_at", "team_id", "issue"}`, plus
 * `changes` (given as JSON) for issue.updated, and the issue's `organization_id` (which the relay
 * moves into the envelope, for webhooks scoped to organizations; receivers' bodies stay as they
 * are). This flat form is the outbox's record only: the relay reads it with packages/messaging and
 * publishes the event's envelope (docs/events.md).
 * `$1` is the team, `eventParam` the event id, `traceParam` the trace context. The outbox row's
 * `created_at`, which orders the relay's claims, is the event's own `created_at`: an update's is
 * the time its row was changed (clock_timestamp(), taken once the row lock is held), so two
 * updates of one issue are ordered as they committed, however their statements interleaved.
 */
function writeEventAndReturn(event: IssueEventName, eventParam: string, traceParam: string, changesParam?: string, leaseParam?: string): string {
  const createdAt = event === 'issue.created' ? 'changed.created_at' : 'changed.updated_at';
  // Handed to this process's relay (leaseParam): leased to it, returned, and no notification.
  const [eventColumns, returned] = leaseParam
    ? [
        `id AS event_id, subject AS event_subject, payload AS event_payload, trace_context AS event_trace_context,
         created_at AS event_created_at, order_key AS event_order_key`,
        ', event.*',
      ]
    : ['id AS event_id', `, pg_notify('${OUTBOX_CHANNEL}', '')`];
  return `, event AS (
       INSERT INTO outbox (id, subject, payload, trace_context, claimed_until, created_at)
       SELECT ${eventParam}, '${ISSUE_EVENT_SUBJECTS[event]}', row_to_json(envelope)::text, ${traceParam}, ${leaseParam ? `now() + make_interval(secs => ${leaseParam})` : 'NULL'}, ${createdAt}
       FROM changed, LATERAL (
         SELECT ${eventParam}::uuid AS id, '${event}'::text AS event, ${timestamp(createdAt, 'created_at')}, $1::bigint AS team_id,
                changed.organization_id,
                (SELECT row_to_json(public) FROM (SELECT ${ISSUE_COLUMNS} FROM changed) AS public) AS issue
                ${changesParam ? `, ${changesParam}::json AS changes` : ''}
       ) AS envelope
       RETURNING ${eventColumns}
     )
     SELECT ${ISSUE_COLUMNS}${returned} FROM changed, event`;
}

/** pg_notify's (void) column, dropped from what the API returns. */
const withoutNotify = ({ pg_notify: _notify, ...issue }: Issue & { pg_notify?: unknown }): Issue => issue;

/** The columns of a create handed to the relay: the issue, and its event's outbox row. */
type IssueWithEvent = Issue & {
  event_id: string;
  event_subject: string;
  event_payload: string;
  event_trace_context: OutboxEvent['trace_context'];
  event_created_at: Date;
  event_order_key: string | null;
};

function splitEvent(row: IssueWithEvent): { issue: Issue; event: OutboxEvent } {
  const { event_id, event_subject, event_payload, event_trace_context, event_created_at, event_order_key, ...issue } = row;
  return {
    issue,
    event: { id: event_id, subject: event_subject, payload: event_payload, trace_context: event_trace_context, created_at: event_created_at, order_key: event_order_key },
  };
}

export class IssueStore {
  private readonly optimisticUpdateAttempts: number;

  /**
   * `publisher`: this process's relay, which publishes the issue.created events of its creates
   * as soon as they commit. Without it, every event waits for a relay's claim (woken by a
   * notification at commit).
   */
  constructor(
    private readonly pool: Pool,
    private readonly publisher?: CommittedEventPublisher,
    options: IssueStoreOptions = {},
  ) {
    this.optimisticUpdateAttempts = options.optimisticUpdateAttempts ?? DEFAULT_OPTIMISTIC_UPDATE_ATTEMPTS;
  }

  /**
   * Newest first: at most `take` issues, before id `beforeId` when given; with `maxBytes`, only as
   * many as may fit in a page of that many bytes, and the one after them (boundedPageQuery).
   */
  async list(scope: ProjectScope, page: { take: number; beforeId?: number | undefined; maxBytes?: number | undefined }): Promise<Issue[]> {
    const { rows } = await this.pool.query<Issue>(ISSUE_PAGE, [scope.teamId, scope.organizationId, scope.projectId, page.beforeId ?? null, page.take, page.maxBytes ?? null]);
    return rows;
  }

  async find(scope: ProjectScope, issueId: number): Promise<Issue | undefined> {
    const { rows } = await this.pool.query<Issue>(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE ${SCOPE} AND id = $4`, [scope.teamId, scope.organizationId, scope.projectId, issueId]);
    return rows[0];
  }

  /**
   * Takes the project's next number and writes the issue with its issue.created event, in one
   * statement: a single round trip, and atomic without an explicit transaction. `recordIn` (the
   * record of an idempotent request's answer) joins it in a transaction when given.
   */
  async create(scope: ProjectScope, referencePrefix: string, createdBy: number, input: CreateIssueInput, recordIn?: InSameTransaction<Issue>): Promise<Issue> {
    const written = recordIn
      ? await withTransaction(this.pool, async (client) => {
          const inserted = await this.insert(client, scope, referencePrefix, createdBy, input);
          await recordIn(client, inserted.issue);
          return inserted;
        })
      : await this.insert(this.pool, scope, referencePrefix, createdBy, input);
    // Committed: the event may go out now.
    if (written.event) this.publisher?.publish(written.event);
    return written.issue;
  }

  private async insert(db: Queryable, scope: ProjectScope, referencePrefix: string, createdBy: number, input: CreateIssueInput): Promise<{ issue: Issue; event?: OutboxEvent }> {
    const values = newIssueValues(input);
    const direct = this.publisher?.ready() ?? false;
    const { rows } = await db.query<Issue | IssueWithEvent>({
      name: direct ? 'issue-create-direct' : 'issue-create',
      text: `WITH counter AS (
         INSERT INTO project_issue_counters (project_id, last_number) VALUES ($3, 1)
         ON CONFLICT (project_id) DO UPDATE SET last_number = project_issue_counters.last_number + 1
         RETURNING last_number
       ), changed AS (
         INSERT INTO issues (team_id, organization_id, project_id, number, reference_code, title, description, url,
                             type, status, priority, assigned_to, estimated_date, created_by)
         SELECT $1, $2, $3, counter.last_number, $4 || '-' || counter.last_number, $5, $6, $7, $8, $9, $10, $11, $12, $13
         FROM counter
         RETURNING *
       )${writeEventAndReturn('issue.created', '$14', '$15', undefined, direct ? '$16' : undefined)}`,
      values: [
        scope.teamId,
        scope.organizationId,
        scope.projectId,
        referencePrefix,
        values.title,
        values.description,
        values.url,
        values.type,
        values.status,
        values.priority,
        values.assigned_to,
        values.estimated_date,
        createdBy,
        randomUUID(),
        captureTraceContext(),
        ...(direct && this.publisher ? [this.publisher.leaseSeconds] : []),
      ],
    });
    return direct ? splitEvent(rows[0] as IssueWithEvent) : { issue: withoutNotify(rows[0] as Issue) };
  }

  /**
   * Applies the fields of `update` that differ from the stored issue. Nothing changed: nothing is
   * written, `updated_at` stays, and no event fires. `changes.from` is exact even under concurrent
   * updates.
   *
   * The issue is read, the changes worked out, then written with its event in one statement that
   * applies only if every field the request names still holds the value read (compare and set).
   * So the event commits in a single round trip, with no transaction held open across turns of
   * the event loop: however busy the API is, the event is on its way to the relay as soon as
   * PostgreSQL commits it. A concurrent update in between makes the statement change nothing,
   * and the update is worked out again; after `optimisticUpdateAttempts` such misses, under the
   * issue's row lock.
   */
  async update(scope: ProjectScope, issueId: number, update: UpdateIssueInput): Promise<Issue | undefined> {
    for (let attempt = 0; attempt < this.optimisticUpdateAttempts; attempt += 1) {
      const current = await this.find(scope, issueId);
      if (!current) return undefined;
      const changes = diffIssue(current, update);
      if (!EDITABLE_FIELDS.some((field) => changes[field] !== undefined)) return current;
      const written = await this.writeChanges(this.pool, scope, issueId, update, current, changes);
      if (written) return written;
    }
    return withTransaction(this.pool, async (client) => {
      const current = await this.lockForUpdate(client, scope, issueId);
      if (!current) return undefined;
      const changes = diffIssue(current, update);
      if (!EDITABLE_FIELDS.some((field) => changes[field] !== undefined)) return current;
      return this.writeChanges(client, scope, issueId, update, current, changes);
    });
  }

  /**
   * Writes `changes` and their issue.updated event in one statement, provided every field named by
   * `update` still holds its value in `current`; undefined when one no longer does (nothing written).
   */
  private async writeChanges(db: Queryable, scope: ProjectScope, issueId: number, update: UpdateIssueInput, current: Issue, changes: IssueChanges): Promise<Issue | undefined> {
    const changed = EDITABLE_FIELDS.filter((field) => changes[field] !== undefined);
    const named = EDITABLE_FIELDS.filter((field) => field in update && update[field] !== undefined);
    // $1 is the team (for the event), $2 the issue, $3 the event id, $4 the trace, $5 the changes,
    // $6 and $7 the organization and project; then the new values, then the values read.
    const assignments = changed.map((field, index) => `${field} = $${index + 8}`);
    const guards = named.map((field, index) => `${field} IS NOT DISTINCT FROM $${index + 8 + changed.length}`);
    const { rows } = await db.query<Issue>(
      `WITH changed AS (
         UPDATE issues SET ${assignments.join(', ')}, updated_at = clock_timestamp()
         WHERE id = $2 AND team_id = $1 AND organization_id = $6 AND project_id = $7 AND ${guards.join(' AND ')}
         RETURNING *
       )${writeEventAndReturn('issue.updated', '$3', '$4', '$5')}`,
      [
        scope.teamId,
        issueId,
        randomUUID(),
        captureTraceContext(),
        JSON.stringify(changes),
        scope.organizationId,
        scope.projectId,
        ...changed.map((field) => changes[field]?.to),
        ...named.map((field) => current[field]),
      ],
    );
    return rows[0] ? withoutNotify(rows[0]) : undefined;
  }

  private async lockForUpdate(client: PoolClient, scope: ProjectScope, issueId: number): Promise<Issue | undefined> {
    const { rows } = await client.query<Issue>(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE ${SCOPE} AND id = $4 FOR UPDATE`, [
      scope.teamId,
      scope.organizationId,
      scope.projectId,
      issueId,
    ]);
    return rows[0];
  }
}
