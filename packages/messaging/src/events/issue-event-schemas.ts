import { z } from 'zod';
import { issue } from '@worklane/api-contract';
import { ISSUE_EVENT_NAMES, type IssueEventName } from '../event-subjects';
import { envelopeOf } from './envelope';

/**
 * The issue events, version 1: `data` is `{ issue }` for issue.created and `{ issue, changes }`
 * for issue.updated, the issue as the API returns it (packages/api-contract). The values of the
 * enumerated fields (type, status, priority) and the keys of `changes` are read as plain strings
 * here: the bus only relays them, so a value the API adds later is not a reason for a consumer to
 * refuse the event. The API's document lists the values.
 */

const busIssue = issue
  .extend({
    type: z.string().min(1).meta({ description: 'The issue type, one of the API’s values (bug, feature, task, improvement).' }),
    status: z.string().min(1).meta({ description: 'The status, one of the API’s values (triage, backlog, todo, in_progress, in_review, done, cancelled).' }),
    priority: z.string().min(1).meta({ description: 'The priority, one of the API’s values (none, low, medium, high, urgent).' }),
  })
  .loose()
  .meta({ description: 'The issue after the change, as the API returns it.' });

const change = z
  .object({ from: z.unknown().meta({ description: 'The value before the change.' }), to: z.unknown().meta({ description: 'The value after it.' }) })
  .loose()
  .meta({ description: 'One changed field.' });

export const issueCreatedV1 = envelopeOf(z.literal('issue.created'), 1, z.object({ issue: busIssue }).loose().meta({ description: 'The new issue.' }), {
  title: 'issue.created v1',
  description: 'An issue was created.',
});

export const issueUpdatedV1 = envelopeOf(
  z.literal('issue.updated'),
  1,
  z
    .object({
      issue: busIssue,
      changes: z.record(z.string(), change).meta({ description: 'Each field that changed (at least one), with its old and new value.' }),
    })
    .loose()
    .meta({ description: 'The issue after the change, and what changed.' }),
  { title: 'issue.updated v1', description: 'A change to at least one field of an issue was committed.' },
);

/**
 * Published in place of an event that can never be published (too large for the bus): the event's
 * envelope fields, the issue's identifying fields, and why. The delivery service records it in the
 * team's delivery log instead of sending it. Its `type` is the type of the lost event.
 */
export const deadLetterNoticeV1 = envelopeOf(
  z.enum(ISSUE_EVENT_NAMES as [IssueEventName, ...IssueEventName[]]).meta({ description: 'The type of the event that was lost.' }),
  1,
  z
    .object({
      issue: z
        .object({
          id: issue.shape.id,
          project_id: issue.shape.project_id.optional(),
          number: issue.shape.number.optional(),
          reference_code: issue.shape.reference_code.optional(),
        })
        .loose()
        .meta({ description: 'The identifying fields of the event’s issue.' }),
      dead_letter: z
        .object({
          reason: z.string().min(1).meta({ description: 'Why the event can never be published: `payload_too_large` or `invalid_event`.' }),
          detail: z.string().meta({ description: 'What the relay saw, for a person to read.' }),
          size_bytes: z.number().int().min(0).meta({ description: 'The size of the lost event in bytes.' }),
        })
        .loose(),
    })
    .loose()
    .meta({ description: 'The lost event’s issue and why it was lost.' }),
  { title: 'dead-letter notice v1', description: 'An event of this type could never be published; it is recorded in its team’s delivery log, never sent.' },
);

export type IssueCreatedEvent = z.infer<typeof issueCreatedV1>;
export type IssueUpdatedEvent = z.infer<typeof issueUpdatedV1>;
/** An issue event, as the producer builds it and the consumer parses it. */
export type IssueEvent = IssueCreatedEvent | IssueUpdatedEvent;
export type DeadLetterNotice = z.infer<typeof deadLetterNoticeV1>;

/**
 * Every version of every message on the bus, by the name of its JSON Schema file
 * (`<name>.v<version>.json`). A consumer accepts every version listed here; a producer publishes
 * the version of PUBLISHED_VERSION. A version is removed only once no message of it can be left in
 * an outbox or the stream (docs/events.md).
 */
export const EVENT_SCHEMAS = {
  'issue.created': { 1: issueCreatedV1 },
  'issue.updated': { 1: issueUpdatedV1 },
  'dead-letter-notice': { 1: deadLetterNoticeV1 },
} as const satisfies Record<string, Record<number, z.ZodType>>;

export type EventSchemaName = keyof typeof EVENT_SCHEMAS;

/** The version each message is published in now. */
export const PUBLISHED_VERSION = {
  'issue.created': 1,
  'issue.updated': 1,
  'dead-letter-notice': 1,
} as const satisfies Record<EventSchemaName, number>;
