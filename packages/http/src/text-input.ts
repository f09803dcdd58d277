import { validationFailed } from './errors';
import { FieldErrorCollector, MAX_FIELD_NAME_LENGTH, fieldName } from './field-errors';

// PostgreSQL text cannot hold U+0000: storing it fails the whole statement.
const NUL = '\u0000';
// Half of a surrogate pair without the other half is not a character; UTF-8 cannot encode it, so
// it would be stored silently replaced by U+FFFD.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `value` cannot be stored as text, as the end of "The x field ...", or undefined. */
export function textProblem(value: string): string | undefined {
  if (value.includes(NUL)) return 'must not contain the NUL character (U+0000).';
  if (LONE_SURROGATE.test(value)) return 'must be valid Unicode text.';
  return undefined;
}

/** A container still to walk and its path, cut to the length a 422 shows. */
interface Pending {
  value: object;
  path: string;
}

const childPath = (parent: string, key: string): string => {
  if (parent.length > MAX_FIELD_NAME_LENGTH) return parent;
  return parent === '' ? fieldName(key) : fieldName(`${parent}.${key}`);
};

/**
 * Adds a message for every string and every object key in a parsed JSON value (or query object)
 * that cannot be stored as text, named by its path (`labels.2`, `meta.a`). Walks with its own
 * stack: how deep a body nests is the client's choice, and must not overflow ours.
 */
export function collectTextProblems(value: unknown, collector: FieldErrorCollector, rootName = 'body'): void {
  const check = (text: string, path: string, isKey = false) => {
    const problem = textProblem(text);
    if (!problem) return;
    const name = path || rootName;
    collector.add(name, isKey ? `The field name ${name} ${problem}` : `The ${name} field ${problem}`);
  };
  if (typeof value === 'string') check(value, '');
  if (typeof value !== 'object' || value === null) return;
  const stack: Pending[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: container, path } = stack.pop()!;
    const nested: Pending[] = [];
    const visit = (key: string, item: unknown, isKey: boolean) => {
      if (isKey && textProblem(key)) check(key, childPath(path, key), true);
      if (typeof item === 'string') {
        if (textProblem(item)) check(item, childPath(path, key));
      } else if (typeof item === 'object' && item !== null) {
        nested.push({ value: item, path: childPath(path, key) });
      }
    };
    if (Array.isArray(container)) container.forEach((item: unknown, index) => visit(String(index), item, false));
    else for (const key of Object.keys(container)) visit(key, (container as Record<string, unknown>)[key], true);
    // Depth first, in document order.
    for (let index = nested.length - 1; index >= 0; index--) stack.push(nested[index]!);
  }
}

/**
 * 422 naming each field (at any depth, keys included) whose text cannot be stored. Every service
 * runs this on every body and query before its routes, so none of them can fail on such input.
 */
export function requireStorableText(value: unknown, rootName = 'body'): void {
  const collector = new FieldErrorCollector();
  collectTextProblems(value, collector, rootName);
  if (!collector.empty) throw validationFailed(collector.errors, collector.omitted);
}
