import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { api, apiUrl } from './api';

describe('apiUrl', () => {
  it('puts paths under /api/v1', () => {
    expect(apiUrl('http://127.0.0.1:1/', '/teams/1/projects')).toBe('http://127.0.0.1:1/api/v1/teams/1/projects');
    expect(apiUrl('http://127.0.0.1:1', 'teams')).toBe('http://127.0.0.1:1/api/v1/teams');
    expect(apiUrl('http://127.0.0.1:1', 'http://x:2/readyz')).toBe('http://x:2/readyz');
    expect(apiUrl('http://127.0.0.1:1', '/issues', { limit: 5, cursor: undefined, q: 'a b' })).toBe('http://127.0.0.1:1/api/v1/issues?limit=5&q=a+b');
  });
});

describe('api', () => {
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (req.url === '/api/v1/text') {
          res.writeHead(200, { 'content-type': 'text/plain' }).end('plain');
          return;
        }
        if (req.url === '/api/v1/empty') {
          res.writeHead(204).end();
          return;
        }
        res
          .writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json', 'x-test': 'yes' })
          .end(JSON.stringify({ method: req.method, url: req.url, auth: req.headers.authorization ?? null, type: req.headers['content-type'] ?? null, body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the bearer token and JSON bodies and parses JSON answers', async () => {
    const client = api({ gatewayUrl: base }, 'wl_secret');
    const res = await client.post('/teams/1/projects', { name: 'P' });
    expect(res.status).toBe(201);
    expect(res.headers['x-test']).toBe('yes');
    expect(res.body).toEqual({
      method: 'POST',
      url: '/api/v1/teams/1/projects',
      auth: 'Bearer wl_secret',
      type: 'application/json',
      body: '{"name":"P"}',
    });
    expect(JSON.parse(res.text)).toEqual(res.body);
    for (const method of ['get', 'delete'] as const) {
      expect((await client[method]('/x')).body.method).toBe(method.toUpperCase());
    }
    expect((await client.patch('/x', { a: 1 })).body.body).toBe('{"a":1}');
    expect((await client.put('/x', 'raw', { raw: true })).body.body).toBe('raw');
  });

  it('sends no authorization without a token, and null bodies for non-JSON answers', async () => {
    const client = api(base);
    expect((await client.get('/x', { headers: { 'X-Other': '1' } })).body.auth).toBeNull();
    const text = await client.get('/text');
    expect(text).toMatchObject({ status: 200, body: null, text: 'plain' });
    expect(await client.delete('/empty')).toMatchObject({ status: 204, body: null, text: '' });
  });
});
