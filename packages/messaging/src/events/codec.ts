import type { z } from 'zod';
import { ISSUE_EVENT_NAMES, type IssueEventName } from '../event-subjects';
import { EVENT_SCHEMAS, PUBLISHED_VERSION, type DeadLetterNotice, type EventSchemaName, type IssueEvent } from './issue-event-schemas';

/**
 * Building, reading and writing the messages of the bus. The issue service's relay (the producer)
 * and the delivery service's consumer go through these functions only, so both sides share one
 * definition of every message: the zod schemas of issue-event-schemas.ts.
 *
 * Two forms exist:
 * - the envelope, `{ id, type, version, occurred_at, team_id, organization_id?, data }`, which
 *   the bus carries;
 * - the flat form, `{ id, event, created_at, team_id, ...data }`: the shape of the webhook body
 *   receivers get, the shape the issue service's outbox records an event in, and what the bus
 *   carried before the envelope existed. Reading accepts it (as version 1), so a consumer of this
 *   release takes the messages an earlier release left in the stream or in an outbox. The outbox's
 *   record also holds `organization_id`, which goes to the envelope, not to the webhook body.
 */

/** A message read: the event, and which form it came in; or why it is not one. */
export type ReadResult<Event> = { ok: true; event: Event; form: 'envelope' | 'flat' } | { ok: false; problem: string };

/** Thrown by createIssueEvent for fields that do not make a valid event. */
export class InvalidEventError extends Error {
  override readonly name = 'InvalidEventError';
}

type Json = Record<string, unknown>;

const FLAT_HEADER = ['id', 'event', 'created_at', 'team_id', 'organization_id'] as const;

/** `{ organization_id }` when the event has one, else nothing (messages published before it existed). */
const organizationOf = (organizationId: unknown): Json => (organizationId === undefined ? {} : { organization_id: organizationId });

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function decode(input: string | Uint8Array): unknown {
  try {
    return JSON.parse(typeof input === 'string' ? input : Buffer.from(input).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The flat form as a version 1 envelope (not yet validated). */
function fromFlat(flat: Json): Json {
  const { id, event, created_at, team_id, organization_id, ...data } = flat;
  return { id, type: event, version: 1, occurred_at: created_at, team_id, ...organizationOf(organization_id), data };
}

/** What went wrong, in a line: the first few problems with their paths. */
function describe(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(message)'}: ${issue.message}`)
    .join('; ');
}

/**
 * Reads a message with the schema of its name and version. `nameOf` maps the message's `type` to
 * the schema name, or undefined for a type this reader does not take.
 */
function read<Event>(input: string | Uint8Array | Json, nameOf: (type: unknown) => EventSchemaName | undefined): ReadResult<Event> {
  const value = typeof input === 'string' || input instanceof Uint8Array ? decode(input) : input;
  if (!isObject(value)) return { ok: false, problem: 'not a JSON object' };
  const isEnvelope = 'version' in value || 'type' in value || !('event' in value);
  const candidate = isEnvelope ? value : fromFlat(value);
  const name = nameOf(candidate.type);
  if (!name) return { ok: false, problem: `unknown event type ${JSON.stringify(candidate.type)}` };
  const versions: Partial<Record<number, z.ZodType>> = EVENT_SCHEMAS[name];
  const schema = typeof candidate.version === 'number' ? versions[candidate.version] : undefined;
  if (!schema) return { ok: false, problem: `${name} version ${JSON.stringify(candidate.version)} is not one this release reads (it reads ${Object.keys(versions).join(', ')})` };
  const parsed = schema.safeParse(candidate);
  if (!parsed.success) return { ok: false, problem: describe(parsed.error) };
  return { ok: true, event: parsed.data as Event, form: isEnvelope ? 'envelope' : 'flat' };
}

const isIssueEventName = (type: unknown): type is IssueEventName => (ISSUE_EVENT_NAMES as unknown[]).includes(type);

/**
 * Reads an issue event (issue.created, issue.updated) in any version this release knows, as an
 * envelope or in the flat form. The relay reads outbox rows with it, the consumer bus messages.
 */
export function readIssueEvent(input: string | Uint8Array | Json): ReadResult<IssueEvent> {
  return read<IssueEvent>(input, (type) => (isIssueEventName(type) ? type : undefined));
}

/** Reads a dead-letter notice, as an envelope or in the flat form. */
export function readDeadLetterNotice(input: string | Uint8Array | Json): ReadResult<DeadLetterNotice> {
  return read<DeadLetterNotice>(input, (type) => (isIssueEventName(type) ? 'dead-letter-notice' : undefined));
}

/** The fields of an issue event, without the version: the builder sets the one published now. */
export interface IssueEventFields {
  id: string;
  type: IssueEventName;
  occurred_at: string;
  team_id: number;
  /** The issue's organization; webhooks scoped to organizations are matched on it. */
  organization_id?: number;
  data: IssueEvent['data'];
}

/** Builds an issue event in the version published now; throws InvalidEventError when the fields do not make one. */
export function createIssueEvent(fields: IssueEventFields): IssueEvent {
  const { id, type, occurred_at, team_id, organization_id, data } = fields;
  const result = readIssueEvent({ id, type, version: PUBLISHED_VERSION[type], occurred_at, team_id, ...organizationOf(organization_id), data });
  if (!result.ok) throw new InvalidEventError(`not a valid ${type} event: ${result.problem}`);
  return result.event;
}

/** The bytes of a message on the bus: the envelope as compact JSON. */
export function encodeEvent(event: IssueEvent | DeadLetterNotice): string {
  return JSON.stringify(event);
}

/**
 * The webhook body of an event (or the delivery-log payload of a notice): the flat form,
 * `{ id, event, created_at, team_id, ...data }`, as compact JSON. Receivers rely on this shape; it
 * does not follow the envelope's versions (docs/webhooks.md). The envelope's `organization_id` is
 * for routing inside Worklane and is not part of it.
 */
export function toWebhookBody(event: IssueEvent | DeadLetterNotice): string {
  const { id, type, occurred_at, team_id } = event;
  const data: Json = { ...event.data };
  for (const field of FLAT_HEADER) delete data[field];
  return JSON.stringify({ id, event: type, created_at: occurred_at, team_id, ...data });
}

/** The issue fields a notice keeps: small, and enough for a team to find the issue. */
const NOTICE_ISSUE_FIELDS = ['id', 'project_id', 'number', 'reference_code'] as const;
const NOTICE_TEXT_MAX = 64;

/** Why an event was lost, as a notice carries it. */
export interface DeadLetter {
  reason: string;
  detail: string;
  size_bytes: number;
}

/**
 * The notice published in place of an event that can never be published: the event's envelope
 * fields, the issue's identifying fields only, and `dead_letter`. A few hundred bytes whatever the
 * event held.
 */
export function deadLetterNotice(event: IssueEvent, deadLetter: DeadLetter): DeadLetterNotice {
  const issue: Json = {};
  for (const field of NOTICE_ISSUE_FIELDS) {
    const value = (event.data.issue as Json)[field];
    if (typeof value === 'number' || (typeof value === 'string' && value.length <= NOTICE_TEXT_MAX)) issue[field] = value;
  }
  const { id, type, occurred_at, team_id, organization_id } = event;
  const result = readDeadLetterNotice({
    id,
    type,
    version: PUBLISHED_VERSION['dead-letter-notice'],
    occurred_at,
    team_id,
    ...organizationOf(organization_id),
    data: { issue, dead_letter: deadLetter },
  });
  if (!result.ok) throw new InvalidEventError(`not a valid dead-letter notice: ${result.problem}`);
  return result.event;
}
