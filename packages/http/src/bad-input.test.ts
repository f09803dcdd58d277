import pino from 'pino';
import request from 'supertest';
import { z } from 'zod';
import { createMetrics } from '@worklane/observability';
import { createServiceApp, type ServiceAppOptions } from './app';
import { resource } from './routes';
import { parseBody, fields } from './validation';

const URL = '/api/v1/teams/1/things';

function app(extra: Partial<ServiceAppOptions> = {}) {
  return createServiceApp({
    logger: pino({ level: 'silent' }),
    metrics: createMetrics('test'),
    isReady: () => true,
    routes: (router) => {
      resource(router, URL, {
        get: (req, res) => void res.json({ query: req.query }),
        post: (req, res) => void res.json(parseBody(z.object({ name: fields.requiredString(5), tags: z.array(z.enum(['a', 'b'])).optional() }), req.body)),
      });
    },
    ...extra,
  });
}

const post = (instance = app()) => request(instance).post(URL);
const get = (url: string, instance = app()) => request(instance).get(url);

describe('bodies that are not JSON', () => {
  it('answers 415 with the JSON error shape for text/plain and for a body without a content type', async () => {
    const plain = await post().set('Content-Type', 'text/plain').send('{"name":"x"}');
    expect(plain.status).toBe(415);
    expect(plain.body).toEqual({ message: 'The request body must be JSON (Content-Type: application/json).', code: 'unsupported_media_type' });
    const untyped = await post().unset('Content-Type').send(Buffer.from('{"name":"x"}'));
    expect(untyped.status).toBe(415);
  });
});

describe('U+0000 in a body', () => {
  it('is a 422 naming the field, whether the schema knows the field or not, keys included', async () => {
    const known = await post().send({ name: 'a\u0000b' });
    expect(known.status).toBe(422);
    expect(known.body).toEqual({
      message: 'The name field must not contain the NUL character (U+0000).',
      code: 'validation_failed',
      errors: { name: ['The name field must not contain the NUL character (U+0000).'] },
    });
    const nested = await post().send({ name: 'ok', extra: { list: ['x', 'y\u0000'] } });
    expect(nested.status).toBe(422);
    expect(Object.keys(nested.body.errors)).toEqual(['extra.list.1']);
    const key = await post().send({ name: 'ok', ['bad\u0000key']: 1 });
    expect(key.status).toBe(422);
    expect(key.body.errors).toEqual({ 'bad\u0000key': ['The field name bad\u0000key must not contain the NUL character (U+0000).'] });
  });

  it('checks HTML form bodies too', async () => {
    const instance = createServiceApp({
      logger: pino({ level: 'silent' }),
      metrics: createMetrics('test'),
      isReady: () => true,
      formBodies: true,
      routes: (router) => void router.post('/login', (req, res) => void res.json(req.body)),
    });
    const response = await request(instance).post('/login').type('form').send('email=a%00b&password=x');
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ email: ['The email field must not contain the NUL character (U+0000).'] });
  });
});

describe('a 422 with many errors', () => {
  it('lists at most 20 field errors by default and says how many more there were', async () => {
    const tags = Array.from({ length: 100 }, () => 'nope');
    const response = await post().send({ name: 'ok', tags });
    expect(response.status).toBe(422);
    expect(Object.keys(response.body.errors)).toHaveLength(20);
    expect(response.body.errors_omitted).toBe(80);
  });

  it('stays small for a 400 KB invalid array', async () => {
    const tags = Array.from({ length: 100_000 }, (_, index) => index);
    const body = JSON.stringify({ name: 'ok', tags });
    expect(body.length).toBeGreaterThan(400_000);
    const response = await post().set('Content-Type', 'application/json').send(body);
    expect(response.status).toBe(422);
    expect(response.text.length).toBeLessThan(16 * 1024);
    expect(response.body.errors_omitted).toBe(100_000 - 20);
  });

  it('bounds each message, and takes its limit from the options', async () => {
    const instance = app({ inputLimits: { maxFieldErrors: 3 } });
    const response = await post(instance).send({ name: 'ok', tags: ['x', 'y', 'z', 'w'] });
    expect(Object.keys(response.body.errors)).toHaveLength(3);
    expect(response.body.errors_omitted).toBe(1);
    const longKeys = await post().send({ name: 'ok', [`${'k'.repeat(10_000)}\u0000`]: 1 });
    expect(longKeys.status).toBe(422);
    expect(longKeys.text.length).toBeLessThan(2_000);
  });
});

describe('query parameters', () => {
  it('answers 422 for an over-long name or value, naming the parameter', async () => {
    const response = await get(`${URL}?cursor=${'c'.repeat(2_000)}`);
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ cursor: ['The cursor parameter must not be longer than 1024 characters.'] });
    expect((await get(`${URL}?${'n'.repeat(2_000)}=1`)).status).toBe(422);
  });

  it('answers 422 for U+0000 in a value, and leaves malformed escapes to the routes as text', async () => {
    const nul = await get(`${URL}?limit=1%00`);
    expect(nul.status).toBe(422);
    expect(nul.body.errors).toEqual({ limit: ['The limit field must not contain the NUL character (U+0000).'] });
    const malformed = await get(`${URL}?limit=%zz&cursor=%E0%A4%A`);
    expect(malformed.status).toBe(200);
    const repeated = await get(`${URL}?limit=1&limit=2`);
    expect(repeated.status).toBe(200);
  });

  it('applies a configured query limit', async () => {
    const response = await get(`${URL}?cursor=${'c'.repeat(100)}`, app({ inputLimits: { maxQueryValueLength: 64 } }));
    expect(response.status).toBe(422);
  });
});
