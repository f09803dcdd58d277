import fs from 'node:fs';
import path from 'node:path';
import { readDeadLetterNotice, readIssueEvent, toWebhookBody } from './codec';
import { breakingChanges, eventJsonSchemas, schemaText, type JsonSchema } from './json-schemas';

const SCHEMAS = path.join(__dirname, '..', '..', 'schemas');
const EXAMPLES = path.join(SCHEMAS, 'examples');
const REGENERATE = 'npm run schemas -w @worklane/messaging';

const committedFiles = () => fs.readdirSync(SCHEMAS).filter((file) => file.endsWith('.json'));

describe('the committed JSON Schemas of the bus messages', () => {
  it.each(eventJsonSchemas().map((entry) => [entry.file, entry] as const))('%s is current', (file, { schema }) => {
    const target = path.join(SCHEMAS, file);
    if (!fs.existsSync(target)) throw new Error(`schemas/${file} is missing: run \`${REGENERATE}\` and commit it`);
    const committed = fs.readFileSync(target, 'utf8');
    if (committed === schemaText(schema)) return;
    const breaking = breakingChanges(JSON.parse(committed) as JsonSchema, schema);
    if (breaking.length > 0) {
      throw new Error(
        `The zod schema of ${file} changed in a way that breaks consumers of this version:\n  ${breaking.join('\n  ')}\n` +
          'Keep this version as it is and add the change as a new version, read alongside it (docs/events.md).',
      );
    }
    throw new Error(`schemas/${file} is stale (a compatible change): run \`${REGENERATE}\` and commit it`);
  });

  it('still has a schema in the code for every version committed (none dropped while it may still be in flight)', () => {
    const generated = new Set(eventJsonSchemas().map((entry) => entry.file));
    expect(committedFiles().filter((file) => !generated.has(file))).toEqual([]);
  });

  it.each(committedFiles().map((file) => [file]))('%s: its example is read by the current parser', (file) => {
    const examplePath = path.join(EXAMPLES, file);
    if (!fs.existsSync(examplePath)) throw new Error(`schemas/examples/${file} is missing: every committed version keeps an example message`);
    const example = fs.readFileSync(examplePath, 'utf8');
    const [, name, version] = /^(.+)\.v(\d+)\.json$/.exec(file) ?? [];
    const reader = name === 'dead-letter-notice' ? readDeadLetterNotice : readIssueEvent;
    const read = reader(example);
    if (!read.ok) throw new Error(`the current parser refuses the example of ${file}: ${read.problem}`);
    expect(read.form).toBe('envelope');
    expect(read.event).toEqual(JSON.parse(example));
    expect(read.event.version).toBe(Number(version));
    if (name !== 'dead-letter-notice') expect(read.event.type).toBe(name);
    // Its webhook body (the flat form) reads back to the same event.
    const flat = reader(toWebhookBody(read.event));
    expect(flat.ok && flat.event).toEqual(read.event);
  });
});

describe('breakingChanges', () => {
  const v1: JsonSchema = {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid', description: 'The id.' },
      team_id: { type: 'integer', minimum: 1 },
      data: {
        type: 'object',
        properties: { title: { type: 'string' }, note: { type: ['string', 'null'] } },
        required: ['title'],
        additionalProperties: {},
      },
    },
    required: ['id', 'team_id', 'data'],
    additionalProperties: {},
  };
  const change = (edit: (schema: JsonSchema & { properties: Record<string, JsonSchema> }) => void) => {
    const copy = structuredClone(v1) as JsonSchema & { properties: Record<string, JsonSchema> };
    edit(copy);
    return breakingChanges(v1, copy);
  };
  const data = (schema: JsonSchema) => (schema.properties as Record<string, JsonSchema>).data as JsonSchema & { properties: Record<string, JsonSchema>; required: string[] };

  it('lets a version gain optional fields and new descriptions', () => {
    expect(breakingChanges(v1, v1)).toEqual([]);
    expect(
      change((schema) => {
        schema.properties.source = { type: 'string' };
        data(schema).properties.labels = { type: 'array', items: { type: 'string' } };
        schema.properties.id!.description = 'The event id.';
        schema.examples = [{}];
      }),
    ).toEqual([]);
  });

  it('reports a removed, renamed or retyped required field, and a changed requirement', () => {
    expect(change((schema) => delete data(schema).properties.title)).toEqual(['data.title: removed (it was required)']);
    expect(
      change((schema) => {
        delete schema.properties.team_id;
        schema.properties.team = { type: 'integer', minimum: 1 };
        (schema.required as string[]).splice(1, 1, 'team');
      }),
    ).toEqual(['team_id: removed (it was required)', 'team: added as required']);
    expect(change((schema) => (schema.properties.team_id = { type: 'string', minimum: 1 }))).toEqual(['team_id: type changed from "integer" to "string"']);
    expect(change((schema) => (data(schema).properties.note = { type: 'string' }))).toEqual(['data.note: type changed from ["string","null"] to "string"']);
    expect(change((schema) => (data(schema).required = []))).toEqual(['data.title: no longer required']);
    expect(change((schema) => data(schema).required.push('note'))).toEqual(['data.note: became required']);
    expect(change((schema) => (schema.properties.id!.format = 'uri'))).toEqual(['id: format changed from "uuid" to "uri"']);
    expect(change((schema) => (schema.additionalProperties = false))).toEqual(['(the message): additionalProperties changed from {} to false']);
  });

  it('compares alternatives one by one', () => {
    const before: JsonSchema = { anyOf: [{ type: 'integer' }, { type: 'null' }] };
    expect(breakingChanges(before, { anyOf: [{ type: 'integer', description: 'x' }, { type: 'null' }] })).toEqual([]);
    expect(breakingChanges(before, { anyOf: [{ type: 'string' }, { type: 'null' }] })).toEqual(['[anyOf/0]: type changed from "integer" to "string"']);
    expect(breakingChanges(before, { type: 'integer' })).toHaveLength(2);
  });
});
