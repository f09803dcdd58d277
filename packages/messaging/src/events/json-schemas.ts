import { z } from 'zod';
import { EVENT_SCHEMAS, type EventSchemaName } from './issue-event-schemas';

/**
 * The JSON Schemas of the bus messages, one per type and version, generated from the zod schemas
 * and committed under packages/messaging/schemas (`npm run schemas -w @worklane/messaging` writes
 * them). They are the contract between the issue service and the delivery service, readable
 * without either's code; a test fails when they are stale, and when a change to a version would
 * break a consumer of it (breakingChanges below).
 */

export type JsonSchema = { [key: string]: unknown };

export interface EventJsonSchema {
  name: EventSchemaName;
  version: number;
  /** `issue.created.v1.json` */
  file: string;
  schema: JsonSchema;
}

/** The file a version's schema is committed as. */
export const schemaFileName = (name: string, version: number) => `${name}.v${version}.json`;

/** Every message's JSON Schema, in a stable order. */
export function eventJsonSchemas(): EventJsonSchema[] {
  const schemas: EventJsonSchema[] = [];
  for (const [name, versions] of Object.entries(EVENT_SCHEMAS) as [EventSchemaName, Record<number, z.ZodType>][]) {
    for (const [version, schema] of Object.entries(versions)) {
      const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonSchema;
      schemas.push({ name, version: Number(version), file: schemaFileName(name, Number(version)), schema: json });
    }
  }
  return schemas;
}

/** The committed text of a schema: two-space JSON and a final newline. */
export const schemaText = (schema: JsonSchema) => `${JSON.stringify(schema, null, 2)}\n`;

/** Keywords that only describe: changing them changes nothing a consumer checks. */
const ANNOTATIONS = new Set(['title', 'description', 'examples', '$comment', 'deprecated', '$schema']);

const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);
const show = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));
const at = (path: string) => path || '(the message)';

/**
 * What in `current` would break a consumer or a producer of the same version described by
 * `previous`. Inside a version, messages flow both ways between releases (an older producer's
 * messages wait in the outbox or the stream for a newer consumer; a newer producer may ship
 * before an older consumer), so the only change allowed is adding an optional field; changes to
 * annotations (descriptions, examples) are free. Reported, each with its path:
 * a removed field (a renamed one is removed, and added as required), a field that became required
 * or optional, a changed type or constraint (type, enum, const, pattern, format, bounds,
 * additionalProperties).
 */
export function breakingChanges(previous: JsonSchema, current: JsonSchema, path = ''): string[] {
  const found: string[] = [];
  const previousProperties = isSchema(previous.properties) ? previous.properties : {};
  const currentProperties = isSchema(current.properties) ? current.properties : {};
  const previousRequired = new Set(Array.isArray(previous.required) ? (previous.required as string[]) : []);
  const currentRequired = new Set(Array.isArray(current.required) ? (current.required as string[]) : []);

  for (const [field, schema] of Object.entries(previousProperties)) {
    const fieldPath = path ? `${path}.${field}` : field;
    const next = currentProperties[field];
    if (next === undefined) {
      found.push(`${fieldPath}: removed (it was ${previousRequired.has(field) ? 'required' : 'optional'})`);
      continue;
    }
    if (previousRequired.has(field) && !currentRequired.has(field)) found.push(`${fieldPath}: no longer required`);
    if (!previousRequired.has(field) && currentRequired.has(field)) found.push(`${fieldPath}: became required`);
    if (isSchema(schema) && isSchema(next)) found.push(...breakingChanges(schema, next, fieldPath));
  }
  for (const field of Object.keys(currentProperties)) {
    if (!(field in previousProperties) && currentRequired.has(field)) found.push(`${path ? `${path}.${field}` : field}: added as required`);
  }

  const keywords = new Set([...Object.keys(previous), ...Object.keys(current)]);
  for (const keyword of keywords) {
    if (ANNOTATIONS.has(keyword) || keyword === 'properties' || keyword === 'required') continue;
    const before = previous[keyword];
    const after = current[keyword];
    if (isSchema(before) && isSchema(after)) {
      found.push(...breakingChanges(before, after, `${path}[${keyword}]`));
    } else if (Array.isArray(before) && Array.isArray(after) && before.every(isSchema) && after.every(isSchema) && before.length > 0) {
      if (before.length !== after.length) found.push(`${at(path)}: ${keyword} changed from ${before.length} alternatives to ${after.length}`);
      else before.forEach((schema, index) => found.push(...breakingChanges(schema, after[index] as JsonSchema, `${path}[${keyword}/${index}]`)));
    } else if (JSON.stringify(before) !== JSON.stringify(after)) {
      found.push(`${at(path)}: ${keyword} changed from ${show(before)} to ${show(after)}`);
    }
  }
  return found;
}
