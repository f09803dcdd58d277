import { timestamp, withTransaction, type Pool, type PoolClient, type Queryable } from '@worklane/db';
import { captureTraceContext } from '@worklane/messaging';
import { issueEvent, type OutboxEvent } from '../domain/events';
import { diffIssue, EDITABLE_FIELDS, newIssueValues, type CreateIssueInput, type Issue, type UpdateIssueInput } from '../domain/issue';

/** Where an issue lives; every query is scoped by all three so that ids from elsewhere find nothing. */
export interface ProjectScope {
  teamId: number;
  organizationId: number;
  projectId: number;
}

/** Wakes the outbox relays once the transaction that wrote an event commits. */
export const OUTBOX_CHANNEL = 'issue_outbox';

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

async function writeOutbox(client: Queryable, event: OutboxEvent): Promise<void> {
  await client.query(
    `WITH written AS (
       INSERT INTO outbox (id, subject, payload, trace_context) VALUES ($1, $2, $3, $4) RETURNING id
     )
     SELECT pg_notify('${OUTBOX_CHANNEL}', '') FROM written`,
    [event.id, event.subject, event.payload, captureTraceContext()],
  );
}

export class IssueStore {
  constructor(private readonly pool: Pool) {}

  /** Newest first. */
  async list(scope: ProjectScope): Promise<Issue[]> {
    const { rows } = await this.pool.query<Issue>(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE ${SCOPE} ORDER BY id DESC`, [
      scope.teamId,
      scope.organizationId,
      scope.projectId,
    ]);
    return rows;
  }

  async find(scope: ProjectScope, issueId: number): Promise<Issue | undefined> {
    const { rows } = await this.pool.query<Issue>(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE ${SCOPE} AND id = $4`, [
      scope.teamId,
      scope.organizationId,
      scope.projectId,
      issueId,
    ]);
    return rows[0];
  }

  /** Takes the project's next number and writes the issue with its issue.created event. */
  async create(scope: ProjectScope, referencePrefix: string, createdBy: number, input: CreateIssueInput): Promise<Issue> {
    const values = newIssueValues(input);
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<Issue>(
        `WITH counter AS (
           INSERT INTO project_issue_counters (project_id, last_number) VALUES ($3, 1)
           ON CONFLICT (project_id) DO UPDATE SET last_number = project_issue_counters.last_number + 1
           RETURNING last_number
         )
         INSERT INTO issues (team_id, organization_id, project_id, number, reference_code, title, description, url,
                             type, status, priority, assigned_to, estimated_date, created_by)
         SELECT $1, $2, $3, counter.last_number, $4 || '-' || counter.last_number, $5, $6, $7, $8, $9, $10, $11, $12, $13
         FROM counter
         RETURNING ${ISSUE_COLUMNS}`,
        [
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
        ],
      );
      const issue = rows[0] as Issue;
      await writeOutbox(client, issueEvent('issue.created', scope.teamId, issue));
      return issue;
    });
  }

  /**
   * Applies the fields of `update` that differ from the stored issue. Nothing changed: nothing is
   * written, `updated_at` stays, and no event fires. The row lock makes `changes.from` exact even
   * under concurrent updates.
   */
  async update(scope: ProjectScope, issueId: number, update: UpdateIssueInput): Promise<Issue | undefined> {
    return withTransaction(this.pool, async (client) => {
      const current = await this.lockForUpdate(client, scope, issueId);
      if (!current) return undefined;
      const changes = diffIssue(current, update);
      const changed = EDITABLE_FIELDS.filter((field) => changes[field] !== undefined);
      if (changed.length === 0) return current;
      const assignments = changed.map((field, index) => `${field} = $${index + 2}`);
      const { rows } = await client.query<Issue>(
        `UPDATE issues SET ${assignments.join(', ')}, updated_at = now() WHERE id = $1 RETURNING ${ISSUE_COLUMNS}`,
        [issueId, ...changed.map((field) => changes[field]?.to)],
      );
      const issue = rows[0] as Issue;
      await writeOutbox(client, issueEvent('issue.updated', scope.teamId, issue, changes));
      return issue;
    });
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
