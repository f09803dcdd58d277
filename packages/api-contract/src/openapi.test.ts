import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { errorBody } from './errors';
import { buildOpenApiDocument } from './openapi';
import { OPERATIONS, REQUEST_SCHEMAS, RESPONSE_SCHEMAS } from './operations';
import { issueCreatedEvent, issueUpdatedEvent } from './webhook-events';

type Json = Record<string, any>;

const document = buildOpenApiDocument() as Json;

/** Runs `redocly lint` (its recommended rules) on a document; resolves to its problems. */
function lint(value: Json): { errors: string[]; warnings: string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'worklane-openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(value));
    const cli = path.join(path.dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
    const run = spawnSync(process.execPath, [cli, 'lint', file, '--format=json'], {
      encoding: 'utf8',
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    const start = run.stdout.indexOf('{');
    if (start < 0) throw new Error(`redocly lint printed no report (exit ${run.status}): ${run.stderr}`);
    const report = JSON.parse(run.stdout.slice(start)) as { problems: { severity: string; ruleId: string; message: string; location?: { pointer?: string }[] }[] };
    const describe = (problem: (typeof report.problems)[number]) => `${problem.ruleId} at ${problem.location?.[0]?.pointer ?? '?'}: ${problem.message}`;
    return {
      errors: report.problems.filter((problem) => problem.severity === 'error').map(describe),
      warnings: report.problems.filter((problem) => problem.severity === 'warn').map(describe),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and lints with no error under redocly’s recommended rules', () => {
    expect(document.openapi).toBe('3.1.0');
    const { errors, warnings } = lint(document);
    expect(errors).toEqual([]);
    // The description route can answer nothing but 200, which the rule that wants a 4xx on every operation notes.
    expect(warnings.filter((warning) => !warning.startsWith('operation-4xx-response at #/paths/~1openapi.json/'))).toEqual([]);
  });

  it('has every operation once, each with a summary, a tag and a success answer', () => {
    const ids = OPERATIONS.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const operation of OPERATIONS) {
      const documented = document.paths[operation.path]?.[operation.method];
      expect(documented).toMatchObject({ operationId: operation.operationId, summary: expect.any(String), tags: [operation.tag] });
      expect(documented.responses[String(operation.success.status)]).toBeDefined();
    }
  });

  it('asks for the bearer token everywhere but on the description itself', () => {
    expect(document.security).toEqual([{ bearerToken: [] }]);
    expect(document.components.securitySchemes.bearerToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    const open = OPERATIONS.filter((operation) => document.paths[operation.path][operation.method].security?.length === 0).map((operation) => operation.operationId);
    expect(open).toEqual(['getApiDescription']);
  });

  it('documents every error status an authenticated operation can answer, with the one error shape', () => {
    for (const operation of OPERATIONS.filter((candidate) => !candidate.public)) {
      const statuses = Object.keys(document.paths[operation.path][operation.method].responses);
      expect(statuses).toEqual(expect.arrayContaining(['401', '403', '404', '422', '429', '503']));
      if (operation.body) expect(statuses).toEqual(expect.arrayContaining(['400', '413', '415']));
    }
    expect(document.components.schemas.Error.required).toEqual(['message', 'code']);
  });

  it('declares the RateLimit headers on every answer to an authenticated request, and only there', () => {
    const names = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
    const headersOf = (response: Json) => {
      const resolved = response.$ref ? document.components.responses[String(response.$ref).split('/').pop()!] : response;
      return Object.keys(resolved.headers ?? {});
    };
    for (const operation of OPERATIONS) {
      const responses = document.paths[operation.path][operation.method].responses as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        if (operation.public || status === '401') expect(headersOf(response)).not.toEqual(expect.arrayContaining(names.slice(0, 1)));
        else expect(headersOf(response)).toEqual(expect.arrayContaining(names));
      }
    }
    for (const name of ['RateLimitLimit', 'RateLimitRemaining', 'RateLimitReset']) {
      expect(document.components.headers[name]).toMatchObject({ required: false, schema: { type: 'integer', minimum: 0 } });
    }
  });

  it('takes an Idempotency-Key on every POST, with its 400, 409 and 422 codes and the replay header', () => {
    const resolve = (value: Json) => (value.$ref ? document.components[String(value.$ref).split('/')[2]!][String(value.$ref).split('/').pop()!] : value);
    const posts = OPERATIONS.filter((operation) => operation.method === 'post' && !operation.public);
    expect(posts.map((operation) => operation.operationId)).toEqual([
      'createOrganization',
      'createProject',
      'createIssue',
      'createWebhook',
      'rotateWebhookSecret',
      'pingWebhook',
      'redeliver',
      'recoverWebhook',
    ]);
    for (const operation of posts) {
      const documented = document.paths[operation.path].post;
      const key = documented.parameters.map(resolve).find((parameter: Json) => parameter.in === 'header');
      expect(key).toMatchObject({ name: 'Idempotency-Key', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 } });
      expect(resolve(documented.responses['400']).description).toContain('`idempotency_key_invalid`');
      expect(resolve(documented.responses['409']).description).toContain('`idempotency_key_in_use`');
      expect(resolve(documented.responses['422']).description).toContain('`idempotency_key_reused`');
      expect(Object.keys(documented.responses[String(operation.success.status)].headers)).toContain('Idempotent-Replayed');
    }
    for (const operation of OPERATIONS.filter((candidate) => candidate.method !== 'post')) {
      const documented = document.paths[operation.path][operation.method];
      expect(JSON.stringify(documented)).not.toContain('Idempotency');
      if (documented.responses['422']) expect(resolve(documented.responses['422']).description).not.toContain('idempotency_key_reused');
    }
    const pattern = new RegExp(document.components.parameters.IdempotencyKey.schema.pattern);
    for (const key of ['a', '5f0c7a52-3f2e-4f0b-9a57-1d1c0e6b7a21', 'order 42/retry:1', '~'.repeat(255)]) expect(pattern.test(key)).toBe(true);
    for (const key of ['', ' a', 'a ', 'tab\there', 'é']) expect(pattern.test(key)).toBe(false);
  });

  it('describes the webhook events and their signature headers', () => {
    for (const event of ['issue.created', 'issue.updated']) {
      const post = document.webhooks[event].post;
      const headers = post.parameters.map((parameter: Json) => parameter.name);
      expect(headers).toEqual(expect.arrayContaining(['X-Webhook-Event', 'X-Webhook-Delivery', 'X-Webhook-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature']));
      expect(post.requestBody.content['application/json'].schema.$ref).toMatch(/Event$/);
    }
    const updated = document.components.schemas.IssueUpdatedEvent;
    expect(updated.required).toEqual(expect.arrayContaining(['id', 'event', 'created_at', 'team_id', 'issue', 'changes']));
  });

  it('reads request bodies as the services take them: unknown fields allowed, defaults and nulls shown', () => {
    const create = document.components.schemas.WebhookCreate;
    expect(create.additionalProperties).toBeUndefined();
    expect(create.required).toEqual(['url', 'events']);
    expect(create.properties.active.default).toBe(true);
    expect(create.properties.events).toMatchObject({ type: 'array', minItems: 1, maxItems: 2, uniqueItems: true });
    expect(document.components.schemas.IssueCreate.properties.title).toMatchObject({ minLength: 1, maxLength: 255 });
  });
});

describe('the examples', () => {
  const examplesOf = (schema: z.ZodType) => (z.globalRegistry.get(schema)?.examples as unknown[] | undefined) ?? [];

  it.each(Object.entries(REQUEST_SCHEMAS))('of %s are accepted by the schema that validates requests', (_name, schema) => {
    expect(examplesOf(schema).length).toBeGreaterThan(0);
    for (const example of examplesOf(schema)) expect(schema.safeParse(example).success).toBe(true);
  });

  it.each(Object.entries({ ...RESPONSE_SCHEMAS, errorBody, issueCreatedEvent, issueUpdatedEvent }))('of %s match the response schema', (_name, schema) => {
    for (const example of examplesOf(schema)) expect(schema.safeParse(example).success).toBe(true);
  });
});
