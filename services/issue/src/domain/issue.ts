import { ISSUE_EDITABLE_FIELDS, type CreateIssueInput, type Issue, type UpdateIssueInput } from '@worklane/api-contract';

// The request schemas and the Issue resource are the API's contract (packages/api-contract); the
// issue service's own rules on top of them are below.
export {
  ISSUE_PRIORITIES,
  ISSUE_STATUSES,
  ISSUE_TEXT_LIMITS,
  ISSUE_TYPES,
  createIssueSchema,
  isCalendarDate,
  updateIssueSchema,
  type CreateIssueInput,
  type Issue,
  type UpdateIssueInput,
} from '@worklane/api-contract';

/** Fields a client may set; everything else on an Issue is the server's. */
export const EDITABLE_FIELDS = ISSUE_EDITABLE_FIELDS;
export type EditableField = (typeof EDITABLE_FIELDS)[number];
export type IssueChanges = Partial<Record<EditableField, { from: unknown; to: unknown }>>;

/** The values of a new issue, defaults applied. */
export function newIssueValues(input: CreateIssueInput): Pick<Issue, EditableField> {
  return {
    title: input.title,
    description: input.description ?? null,
    url: input.url ?? null,
    type: input.type ?? 'task',
    status: input.status ?? 'triage',
    priority: input.priority ?? 'none',
    assigned_to: input.assigned_to ?? null,
    estimated_date: input.estimated_date ?? null,
  };
}

/** Each field the update sets to a value different from the current one, with both values. */
export function diffIssue(current: Pick<Issue, EditableField>, update: UpdateIssueInput): IssueChanges {
  const changes: IssueChanges = {};
  for (const field of EDITABLE_FIELDS) {
    if (!(field in update) || update[field] === undefined) continue;
    const to = update[field];
    const from = current[field];
    if (from !== to) changes[field] = { from, to };
  }
  return changes;
}

/**
 * The part of `BACKENDAPI-12` before the number: the project's name upper-cased with everything
 * but letters and digits removed. A name with no letters or digits at all gives `ISSUE`.
 */
export function referencePrefix(projectName: string): string {
  return projectName.toUpperCase().replace(/[^\p{L}\p{N}]/gu, '') || 'ISSUE';
}

export const referenceCode = (projectName: string, number: number) => `${referencePrefix(projectName)}-${number}`;
