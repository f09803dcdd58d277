import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { API_BASE_PATH, createApiClient } from './index';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: http.Server;
let gatewayUrl: string;
const seen: Seen[] = [];
const answers: { status: number; body?: unknown }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const answer = answers.shift() ?? { status: 204 };
      res.writeHead(answer.status, answer.body === undefined ? {} : { 'content-type': 'application/json' });
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gatewayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  seen.length = 0;
  answers.length = 0;
});

describe('createApiClient', () => {
  it('calls the documented path under /api/v1 with the token, the parameters and the JSON body', async () => {
    const api = createApiClient({ gatewayUrl, token: 'wl_secret' });
    const webhook = { id: 7, team_id: 3, url: 'https://example.com/h', events: ['issue.created'], active: true, created_at: 'x', updated_at: 'x' };
    answers.push({ status: 201, body: webhook });
    const created = await api.POST('/teams/{team}/webhooks', { params: { path: { team: 3 } }, body: { url: 'https://example.com/h', events: ['issue.created'] } });
    expect(created.data).toEqual(webhook);
    expect(created.response.status).toBe(201);
    expect(seen[0]).toMatchObject({ method: 'POST', url: `${API_BASE_PATH}/teams/3/webhooks`, body: JSON.stringify({ url: 'https://example.com/h', events: ['issue.created'] }) });
    expect(seen[0]!.headers).toMatchObject({ authorization: 'Bearer wl_secret', accept: 'application/json', 'content-type': 'application/json' });
  });

  it('encodes path and query parameters, leaving out those not given', async () => {
    const api = createApiClient({ gatewayUrl });
    answers.push({ status: 200, body: { data: [], next_cursor: null } });
    await api.GET('/teams/{team}/webhooks/{webhook}/deliveries', { params: { path: { team: 1, webhook: 2 }, query: { limit: 20, cursor: undefined } } });
    answers.push({ status: 200, body: { data: [], next_cursor: null } });
    await api.GET('/teams/{team}/webhooks/{webhook}/deliveries', { params: { path: { team: 1, webhook: 2 }, query: { cursor: 'a b/c' } } });
    expect(seen.map((request) => request.url)).toEqual([
      `${API_BASE_PATH}/teams/1/webhooks/2/deliveries?limit=20`,
      `${API_BASE_PATH}/teams/1/webhooks/2/deliveries?cursor=a%20b%2Fc`,
    ]);
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('gives an error answer as `error`, with its code', async () => {
    const api = createApiClient({ gatewayUrl, token: 'wl_secret' });
    answers.push({ status: 422, body: { message: 'The url field is required.', code: 'validation_failed', errors: { url: ['The url field is required.'] } } });
    const result = await api.POST('/teams/{team}/webhooks', { params: { path: { team: 1 } }, body: { url: '', events: [] } });
    expect(result.data).toBeUndefined();
    expect(result.response.status).toBe(422);
    expect(result.error?.code).toBe('validation_failed');
    expect(result.error?.errors).toEqual({ url: ['The url field is required.'] });
  });

  it('answers an operation without a body (204) with no data', async () => {
    const api = createApiClient({ gatewayUrl, token: 'wl_secret' });
    answers.push({ status: 204 });
    const result = await api.DELETE('/teams/{team}/webhooks/{webhook}', { params: { path: { team: 1, webhook: 9 } } });
    expect(result.response.status).toBe(204);
    expect(result.data).toBeUndefined();
    expect(seen[0]).toMatchObject({ method: 'DELETE', url: `${API_BASE_PATH}/teams/1/webhooks/9`, body: '' });
  });
});
