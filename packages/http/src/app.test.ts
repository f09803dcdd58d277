import { generateKeyPairSync } from 'node:crypto';
import pino from 'pino';
import request from 'supertest';
import { z } from 'zod';
import { createMetrics, createMetricsServer, type ServiceMetrics } from '@worklane/observability';
import { createServiceApp } from './app';
import { signIdentity } from './identity';
import { idParam, resource } from './routes';
import { parseBody, fields } from './validation';

const gateway = generateKeyPairSync('ed25519');
const issue = generateKeyPairSync('ed25519');
const GATEWAY = { name: 'gateway', key: gateway.privateKey };

function app(metrics: ServiceMetrics = createMetrics('test')) {
  return createServiceApp({
    logger: pino({ level: 'silent' }),
    metrics,
    isReady: () => true,
    identityIssuers: { gateway: gateway.publicKey },
    routes: (router) => {
      resource(router, '/api/v1/teams/:team/things/:thing', {
        get: (req, res) => void res.json({ id: idParam(req, 'thing'), identity: req.identity }),
        patch: (req, res) => void res.json(parseBody(z.object({ name: fields.requiredString(5) }), req.body)),
      });
      router.get('/api/v1/boom', () => {
        throw new Error('secret internals');
      });
    },
  });
}

const signed = (method: string, url: string) => signIdentity(GATEWAY, method, url, { teamId: 1, userId: 2, tokenId: 3 });

describe('createServiceApp', () => {
  it('refuses a request without a signed identity', async () => {
    const response = await request(app()).get('/api/v1/teams/1/things/1');
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: 'Unauthenticated.', code: 'unauthenticated' });
  });

  it('refuses an identity signed with another key or for another path', async () => {
    const forged = signIdentity({ name: 'gateway', key: generateKeyPairSync('ed25519').privateKey }, 'GET', '/api/v1/teams/1/things/1', { teamId: 1, userId: 2, tokenId: 3 });
    expect((await request(app()).get('/api/v1/teams/1/things/1').set(forged)).status).toBe(401);
    // A service's own key (here the issue service's) signs nothing that passes as an identity.
    const byIssue = signIdentity({ name: 'issue', key: issue.privateKey }, 'GET', '/api/v1/teams/1/things/1', { teamId: 1, userId: 2, tokenId: 3 });
    expect((await request(app()).get('/api/v1/teams/1/things/1').set(byIssue)).status).toBe(401);
    const posingAsGateway = signIdentity({ name: 'gateway', key: issue.privateKey }, 'GET', '/api/v1/teams/1/things/1', { teamId: 1, userId: 2, tokenId: 3 });
    expect((await request(app()).get('/api/v1/teams/1/things/1').set(posingAsGateway)).status).toBe(401);
    const otherPath = signed('GET', '/api/v1/teams/1/things/2');
    expect((await request(app()).get('/api/v1/teams/1/things/1').set(otherPath)).status).toBe(401);
  });

  it('accepts a signed identity and exposes it', async () => {
    const url = '/api/v1/teams/1/things/7';
    const response = await request(app()).get(url).set(signed('GET', url));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: 7, identity: { teamId: 1, userId: 2, tokenId: 3 } });
  });

  it('answers 404 for a non-integer id and an unknown route', async () => {
    const url = '/api/v1/teams/1/things/abc';
    expect((await request(app()).get(url).set(signed('GET', url))).body).toEqual({ message: 'Not found.', code: 'not_found' });
    const unknown = '/api/v1/nothing';
    expect((await request(app()).get(unknown).set(signed('GET', unknown))).status).toBe(404);
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const url = '/api/v1/teams/1/things/7';
    const response = await request(app()).delete(url).set(signed('DELETE', url));
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, PATCH, HEAD');
  });

  it('maps body problems to 400, 413, 415 and 422', async () => {
    const url = '/api/v1/teams/1/things/7';
    const send = () => request(app()).patch(url).set(signed('PATCH', url));
    expect((await send().set('Content-Type', 'application/json').send('{"name":')).status).toBe(400);
    expect((await send().set('Content-Type', 'text/plain').send('name=x')).status).toBe(415);
    expect(
      (
        await send()
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ name: 'x'.repeat(1_100_000) }))
      ).status,
    ).toBe(413);
    const invalid = await send().send({ name: 'far too long' });
    expect(invalid.status).toBe(422);
    expect(invalid.body).toEqual({
      message: 'The name field must not be greater than 5 characters.',
      code: 'validation_failed',
      errors: { name: ['The name field must not be greater than 5 characters.'] },
    });
    expect((await send().send({})).body.errors).toEqual({ name: ['The name field is required.'] });
    expect((await send().send({ name: 3 })).body.errors).toEqual({ name: ['The name field must be a string.'] });
  });

  it('hides internals of unexpected errors', async () => {
    const url = '/api/v1/boom';
    const response = await request(app()).get(url).set(signed('GET', url));
    expect(response.status).toBe(500);
    expect(response.text).not.toContain('secret');
  });

  it('labels metrics with route templates', async () => {
    const registry = createMetrics('test');
    const instance = app(registry);
    const url = '/api/v1/teams/1/things/7';
    await request(instance).get(url).set(signed('GET', url));
    // The API port has no /metrics; the metrics listener serves them.
    expect((await request(instance).get('/metrics')).status).toBe(404);
    const metrics = await request(createMetricsServer(registry)).get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('route="/api/v1/teams/:team/things/:thing"');
    expect(metrics.text).not.toContain('things/7');
  });

  it('takes HTML form bodies only when formBodies is set', async () => {
    const formApp = (formBodies: boolean) =>
      createServiceApp({
        logger: pino({ level: 'silent' }),
        metrics: createMetrics('test'),
        isReady: () => true,
        formBodies,
        routes: (router) => void router.post('/login', (req, res) => void res.json(req.body)),
      });
    const form = (instance: ReturnType<typeof formApp>) => request(instance).post('/login').type('form').send('email=a%40example.com&password=x');
    expect((await form(formApp(false))).status).toBe(415);
    const accepted = await form(formApp(true));
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ email: 'a@example.com', password: 'x' });
    expect((await request(formApp(true)).post('/login').set('Content-Type', 'text/plain').send('x')).status).toBe(415);
  });
});

describe('createServiceApp for a proxy', () => {
  it('leaves bodies unread with parseBodies: false and labels metrics with res.locals.route', async () => {
    const registry = createMetrics('test');
    const instance = createServiceApp({
      logger: pino({ level: 'silent' }),
      metrics: registry,
      isReady: () => true,
      parseBodies: false,
      routes: (router) => {
        router.use((req, res) => {
          res.locals.route = '/things/:thing';
          let bytes = 0;
          req.on('data', (chunk: Buffer) => (bytes += chunk.length));
          req.on('end', () => void res.json({ bytes, parsed: req.body !== undefined }));
        });
      },
    });
    const response = await request(instance).post('/things/9').set('Content-Type', 'text/plain').send('not json at all');
    expect(response.body).toEqual({ bytes: 15, parsed: false });
    const metrics = await request(createMetricsServer(registry)).get('/metrics');
    expect(metrics.text).toContain('route="/things/:thing"');
  });
});
