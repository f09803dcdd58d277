import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import request from 'supertest';
import { createMetrics, DependencyUnavailableError } from '@worklane/observability';
import { createServiceApp } from './app';
import { HttpError } from './errors';
import { readiness } from './readiness';
import { DEFAULT_RETRY_AFTER_SECONDS, serviceUnavailable, writeServiceUnavailable } from './service-unavailable';

const UNAVAILABLE = { message: 'Service unavailable.', code: 'service_unavailable' };
const silent = pino({ level: 'silent' });

function app(throwing: unknown, retryAfterSeconds?: number) {
  return createServiceApp({
    logger: silent,
    metrics: createMetrics('test'),
    isReady: () => true,
    retryAfterSeconds,
    routes: (router) => {
      router.get('/fails', () => {
        throw throwing;
      });
    },
  });
}

describe('a dependency that is unavailable', () => {
  const failures: [string, unknown][] = [
    ['a refused database connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a database pool that timed out', new Error('timeout exceeded when trying to connect')],
    ['a database shut down by its administrator', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    ['a gRPC call without an answer', Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14, details: 'No connection established', metadata: {} })],
    ['a gRPC call past its deadline', Object.assign(new Error('4 DEADLINE_EXCEEDED'), { code: 4, details: 'Deadline exceeded', metadata: {} })],
    ['a NATS connection that is closed', Object.assign(new Error('closed connection'), { name: 'ClosedConnectionError' })],
    ['a DependencyUnavailableError', new DependencyUnavailableError('webhook service')],
  ];

  it.each(failures)('answers %s with the one 503: JSON error, code service_unavailable, Retry-After', async (_name, error) => {
    const response = await request(app(error)).get('/fails');
    expect(response.status).toBe(503);
    expect(response.body).toEqual(UNAVAILABLE);
    expect(response.headers['retry-after']).toBe(String(DEFAULT_RETRY_AFTER_SECONDS));
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });

  it('asks for the configured wait', async () => {
    const response = await request(app(new DependencyUnavailableError('database'), 30)).get('/fails');
    expect(response.headers['retry-after']).toBe('30');
  });

  it('gives every 503 a Retry-After, also one a route made itself', async () => {
    expect((await request(app(new HttpError(503, 'Service unavailable.'), 7)).get('/fails')).headers['retry-after']).toBe('7');
    expect((await request(app(serviceUnavailable(2), 7)).get('/fails')).headers['retry-after']).toBe('2');
  });

  it('leaves any other failure a 500 without Retry-After', async () => {
    const response = await request(app(Object.assign(new Error('duplicate key'), { code: '23505' }))).get('/fails');
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ message: 'Server Error.', code: 'server_error' });
    expect(response.headers['retry-after']).toBeUndefined();
  });
});

describe('writeServiceUnavailable', () => {
  it('writes the same 503 on a bare response', async () => {
    const server = http.createServer((_req, res) => writeServiceUnavailable(res, 3));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('3');
      expect(await response.json()).toEqual(UNAVAILABLE);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('readiness', () => {
  const lifecycle = { ready: true };

  it('is ready while every check passes and not shutting down', async () => {
    const isReady = readiness({ lifecycle, checks: { database: async () => true, other: () => undefined } });
    expect(await isReady()).toBe(true);
    expect(await readiness({ lifecycle: { ready: false }, checks: { database: async () => true } })()).toBe(false);
  });

  it('is not ready when a check throws or says false, and logs the change once, naming the check', async () => {
    let up = false;
    const lines: { level: string; object: { failed?: string[] }; message: string }[] = [];
    const logger = {
      warn: (object: object, message: string) => void lines.push({ level: 'warn', object, message }),
      info: (object: object, message: string) => void lines.push({ level: 'info', object, message }),
    };
    const isReady = readiness({
      lifecycle,
      logger: logger as never,
      checks: {
        database: async () => {
          if (!up) throw new Error('connect ECONNREFUSED');
          return true;
        },
        cache: () => up,
      },
    });
    expect(await isReady()).toBe(false);
    expect(await isReady()).toBe(false);
    up = true;
    expect(await isReady()).toBe(true);
    expect(lines.map((line) => [line.level, line.message, line.object.failed])).toEqual([
      ['warn', 'not ready', ['database', 'cache']],
      ['info', 'ready again', undefined],
    ]);
  });

  it('answers /readyz with it', async () => {
    let up = true;
    const service = createServiceApp({ logger: silent, metrics: createMetrics('test'), isReady: readiness({ lifecycle, checks: { database: () => up } }), routes: () => {} });
    expect((await request(service).get('/readyz')).status).toBe(200);
    up = false;
    const down = await request(service).get('/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'not ready' });
  });
});
