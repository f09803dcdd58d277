import { z } from '@worklane/config';
import { RpcError } from '@worklane/grpc';
import { displayName, parseRequest } from './validation';

const schema = z.object({ name: displayName(), nested: z.object({ note: z.string() }).optional() });

const failure = (request: unknown) => {
  try {
    parseRequest(schema, request);
  } catch (error) {
    return (error as RpcError).message;
  }
  throw new Error('expected INVALID_ARGUMENT');
};

describe('parseRequest', () => {
  it('refuses U+0000 in any string of a request, naming the field, before the schema runs', () => {
    expect(failure({ name: 'ci\u0000' })).toBe('name must not contain the NUL character (U+0000).');
    expect(failure({ name: 'ok', nested: { note: '\u0000' } })).toBe('nested.note must not contain the NUL character (U+0000).');
    expect(failure({ name: 'x\ud800' })).toBe('name must be valid Unicode text.');
  });

  it('is an INVALID_ARGUMENT error, and accepts clean text', () => {
    expect(() => parseRequest(schema, { name: '\u0000' })).toThrow(RpcError);
    expect(parseRequest(schema, { name: '  Deploy bot 🚀 ' })).toEqual({ name: 'Deploy bot 🚀' });
  });
});
