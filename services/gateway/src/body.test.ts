import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { HttpError } from '@worklane/http';
import { readJsonBody } from './body';

function request(headers: Record<string, string>, chunks: (string | Buffer)[] = []): IncomingMessage {
  const stream = new PassThrough();
  Object.assign(stream, { headers });
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  return stream as unknown as IncomingMessage;
}

async function status(promise: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return (error as HttpError).status;
  }
}

const json = (body: string, extra: Record<string, string> = {}) =>
  request({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...extra }, [body]);

describe('readJsonBody', () => {
  it('returns the exact bytes of a JSON body, whatever their formatting', async () => {
    const body = '{ "name" : "Project",\n "n": 1.50 }';
    expect((await readJsonBody(json(body)))?.toString()).toBe(body);
  });

  it('accepts any JSON value and +json types, in several chunks', async () => {
    const req = request({ 'content-type': 'application/merge-patch+json; charset=UTF-8', 'transfer-encoding': 'chunked' }, ['[1,', '2]']);
    expect((await readJsonBody(req))?.toString()).toBe('[1,2]');
  });

  it('has nothing to read without a body', async () => {
    await expect(readJsonBody(request({}))).resolves.toBeUndefined();
    await expect(readJsonBody(request({ 'content-length': '0', 'content-type': 'text/plain' }))).resolves.toBeUndefined();
  });

  it('answers 415 for a body that is not JSON or not UTF-8 or compressed', async () => {
    expect(await status(readJsonBody(request({ 'content-type': 'text/plain', 'content-length': '1' }, ['x'])))).toBe(415);
    expect(await status(readJsonBody(request({ 'content-length': '2' }, ['{}'])))).toBe(415);
    expect(await status(readJsonBody(request({ 'content-type': 'application/jsonx', 'content-length': '2' }, ['{}'])))).toBe(415);
    expect(await status(readJsonBody(json('{}', { 'content-type': 'application/json; charset=latin1' })))).toBe(415);
    expect(await status(readJsonBody(json('{}', { 'content-encoding': 'gzip' })))).toBe(415);
  });

  it('answers 400 for JSON that does not parse', async () => {
    expect(await status(readJsonBody(json('{"name":')))).toBe(400);
    expect(await status(readJsonBody(json('   ')))).toBe(400);
  });

  it('answers 413 over 1 MiB, by declared length or by what arrives, and closes the connection', async () => {
    const declared = request({ 'content-type': 'application/json', 'content-length': String(1024 * 1024 + 1) });
    const error = await readJsonBody(declared).catch((caught: HttpError) => caught);
    expect(error).toMatchObject({ status: 413, headers: { Connection: 'close' } });
    const streamed = request({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, [Buffer.alloc(600_000, 32), Buffer.alloc(600_000, 32)]);
    expect(await status(readJsonBody(streamed))).toBe(413);
  });

  it('accepts a body of exactly 1 MiB', async () => {
    const body = `"${'x'.repeat(1024 * 1024 - 2)}"`;
    expect((await readJsonBody(json(body)))?.length).toBe(1024 * 1024);
  });
});

describe('a client that leaves mid-body', () => {
  it('is answered 400 (to no one) rather than counted as a server failure', async () => {
    const stream = new PassThrough();
    Object.assign(stream, { headers: { 'content-type': 'application/json', 'content-length': '100' } });
    stream.write('{"name":');
    const reading = readJsonBody(stream as unknown as IncomingMessage);
    stream.destroy();
    expect(await status(reading)).toBe(400);
  });
});

describe('text that cannot be stored', () => {
  it('answers 422 naming the field for U+0000 anywhere in the body, keys included', async () => {
    const error = await readJsonBody(json('{"title":"a","meta":{"list":["ok","b\\u0000"]}}')).catch((caught: HttpError) => caught);
    expect(error).toMatchObject({ status: 422, errors: { 'meta.list.1': ['The meta.list.1 field must not contain the NUL character (U+0000).'] } });
    expect(await status(readJsonBody(json('{"\\u0000":1}')))).toBe(422);
    expect(await status(readJsonBody(json('"\\u0000"')))).toBe(422);
  });

  it('answers 422 for a lone surrogate, and accepts every other escape', async () => {
    expect(await status(readJsonBody(json('{"title":"\\ud800"}')))).toBe(422);
    expect(await status(readJsonBody(json('{"title":"\\u0001\\u001f\\ud83d\\ude00\\n"}')))).toBe('ok');
  });

  it('takes the size limit it is given', async () => {
    expect(await status(readJsonBody(json('{"a":"0123456789"}'), 10))).toBe(413);
    expect(await status(readJsonBody(json('{"a":1}'), 10))).toBe('ok');
  });
});
