import { z } from 'zod';
import { id, timestamp, uuid } from '@worklane/api-contract';

/**
 * The envelope every event on the bus travels in: the same fields whatever the event, so that
 * a consumer can route, deduplicate and version-check a message before it reads `data`.
 *
 *   { "id", "type", "version", "occurred_at", "team_id", "organization_id"?, "data" }
 *
 * `type` names what happened (`issue.created`), `version` the shape of `data` for that type (an
 * integer, 1 first), and `data` is the type's own payload. docs/events.md explains each field and
 * the rule by which a version may change.
 *
 * The objects are loose: a consumer keeps fields it does not know instead of refusing the message,
 * so a producer may add optional fields inside a version and consumers of that version still read
 * it (and pass the new fields on).
 */

/** What the envelope carries besides `data`, with the description every generated schema repeats. */
export const envelopeFields = {
  id: uuid().meta({
    description: 'The event id (a UUID): unique per event, the `Nats-Msg-Id` of the message, and the `id` of the webhook body receivers get.',
  }),
  occurred_at: timestamp().meta({ description: 'When the change was committed, UTC with microseconds.' }),
  team_id: id().meta({ description: 'The team whose data changed; only that team’s webhooks receive the event.' }),
  organization_id: id().optional().meta({
    description:
      'The organization the changed issue belongs to (in the team). Webhooks scoped to organizations receive only their organizations’ events. Absent from messages published before it was added.',
  }),
};

/**
 * The schema of one event type at one version: the envelope around `data`. `type` is a literal,
 * or an enum for a message that stands for events of several types (a dead-letter notice).
 */
export function envelopeOf<Type extends z.ZodType<string>, Version extends number, Data extends z.ZodType>(
  type: Type,
  version: Version,
  data: Data,
  meta: { title: string; description: string },
) {
  return z
    .object({
      id: envelopeFields.id,
      type,
      version: z.literal(version).meta({ description: `The version of this type's \`data\`: ${version}.` }),
      occurred_at: envelopeFields.occurred_at,
      team_id: envelopeFields.team_id,
      organization_id: envelopeFields.organization_id,
      data,
    })
    .loose()
    .meta(meta);
}
