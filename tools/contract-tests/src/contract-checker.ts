import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { OPERATIONS, buildOpenApiDocument } from '@worklane/api-contract';

type Json = Record<string, any>;

/** A response as the test client saw it. */
export interface ObservedResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: unknown;
  text: string;
}

const DOCUMENT_ID = 'https://worklane.invalid/openapi.json';

/**
 * Checks real answers against the OpenAPI document, the way a client generated from it would read
 * them: the status is documented for the operation, the documented required headers are there and
 * match, and a JSON body validates against the documented schema (no undocumented field either:
 * response schemas close their objects).
 */
export class ContractChecker {
  readonly document: Json;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ReturnType<Ajv2020['compile']>>();
  /** operationId → statuses seen. */
  readonly seen = new Map<string, Set<number>>();

  constructor(document: Json = buildOpenApiDocument()) {
    this.document = document;
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }

  private resolve(value: Json): Json {
    let current = value;
    while (typeof current?.$ref === 'string') {
      const path = (current.$ref as string)
        .replace(/^#\//, '')
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
      current = path.reduce<any>((node, part) => node?.[part], this.document);
    }
    return current;
  }

  /** A compiled schema of the document; its references point into the whole document. */
  private validator(cacheKey: string, schema: Json) {
    let validate = this.validators.get(cacheKey);
    if (!validate) {
      const anchored = JSON.parse(JSON.stringify(schema), (name, value) =>
        name === '$ref' && typeof value === 'string' && value.startsWith('#') ? `${DOCUMENT_ID}${value}` : value,
      );
      validate = this.ajv.compile(anchored);
      this.validators.set(cacheKey, validate);
    }
    return validate;
  }

  /** What is wrong with `response` as an answer of `operationId`; empty when it conforms. */
  problems(operationId: string, response: ObservedResponse): string[] {
    const operation = OPERATIONS.find((candidate) => candidate.operationId === operationId);
    if (!operation) return [`unknown operation ${operationId}`];
    const seen = this.seen.get(operationId) ?? new Set<number>();
    seen.add(response.status);
    this.seen.set(operationId, seen);

    const responses = this.document.paths[operation.path][operation.method].responses as Json;
    const key = String(response.status) in responses ? String(response.status) : `${String(response.status)[0]}XX` in responses ? `${String(response.status)[0]}XX` : 'default';
    const documented = responses[key];
    if (!documented) return [`${operationId} answered ${response.status}, which is not documented (${Object.keys(responses).join(', ')})`];
    const answer = this.resolve(documented);
    const problems: string[] = [];

    for (const [name, headerObject] of Object.entries((answer.headers ?? {}) as Json)) {
      const header = this.resolve(headerObject as Json);
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${operationId} ${response.status}: required header ${name} is missing`);
        continue;
      }
      const schema = header.schema as Json | undefined;
      if (schema?.pattern && !new RegExp(schema.pattern as string).test(value))
        problems.push(`${operationId} ${response.status}: header ${name} "${value}" does not match ${schema.pattern}`);
      if (schema?.type === 'integer' && !/^\d+$/.test(value)) problems.push(`${operationId} ${response.status}: header ${name} "${value}" is not an integer`);
    }

    const content = answer.content as Json | undefined;
    if (!content) {
      if (response.text.length > 0) problems.push(`${operationId} ${response.status}: a body where none is documented`);
      return problems;
    }
    if (!/^application\/json\b/.test(response.headers['content-type'] ?? ''))
      problems.push(`${operationId} ${response.status}: content type ${response.headers['content-type']} is not application/json`);
    const validate = this.validator(`${operationId} ${key}`, content['application/json'].schema as Json);
    if (!validate(response.body)) {
      problems.push(`${operationId} ${response.status}: the body does not match its schema: ${this.ajv.errorsText(validate.errors)} in ${response.text.slice(0, 500)}`);
    }
    return problems;
  }

  /** The operations never seen answering with their documented success. */
  withoutSuccess(): string[] {
    return OPERATIONS.filter((operation) => !this.seen.get(operation.operationId)?.has(operation.success.status)).map((operation) => operation.operationId);
  }
}
