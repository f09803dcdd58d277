import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyIdentity } from '@worklane/http';
import { ServiceUnavailableError } from '../errors';
import { ServiceApi, requestOf, serviceForPath, type HttpServiceName } from './services';

describe('serviceForPath', () => {
  it('routes API paths to the service that owns them, as the gateway does', () => {
    expect(serviceForPath('/api/v1/teams/1/organizations')).toBe('project');
    expect(serviceForPath('/api/v1/teams/1/organizations/2/projects')).toBe('project');
    expect(serviceForPath('/api/v1/teams/1/organizations/2/projects/3')).toBe('project');
    expect(serviceForPath('/api/v1/teams/1/organizations/2/projects/3/issues')).toBe('issue');
    expect(serviceForPath('/api/v1/teams/1/organizations/2/projects/3/issues/4')).toBe('issue');
    expect(serviceForPath('/api/v1/teams/1/webhooks')).toBe('webhook');
    expect(serviceForPath('/api/v1/teams/1/webhooks/5')).toBe('webhook');
    expect(serviceForPath('/api/v1/teams/1/webhooks/5/deliveries?limit=20')).toBe('delivery');
    expect(serviceForPath('/api/v1/teams/1/webhooks/5/ping')).toBe('delivery');
    expect(serviceForPath('/api/v1/teams/1/deliveries/9')).toBe('delivery');
    expect(serviceForPath('/api/v1/teams/1/deliveries/9/redeliver')).toBe('delivery');
  });

  it('refuses a path no service serves', () => {
    expect(() => serviceForPath('/api/v1/teams/1/unknown')).toThrow('no service serves');
    expect(() => serviceForPath('/teams/1/webhooks')).toThrow('no service serves');
  });
});

describe('ServiceApi', () => {
  // One stand-in server per service: it records what it received and answers what the test set.
  interface Received {
    service: HttpServiceName;
    method: string;
    url: string;
    headers: http.IncomingHttpHeaders;
    body: string;
  }
  type Answer = { status: number; body?: string; hang?: boolean };

  const keys = generateKeyPairSync('ed25519');
  const identity = { teamId: 7, userId: 3, tokenId: 0 };
  const received: Received[] = [];
  const answers = new Map<HttpServiceName, Answer>();
  const servers: http.Server[] = [];
  const hanging: http.ServerResponse[] = [];
  const urls = {} as Record<HttpServiceName, string>;

  beforeAll(async () => {
    for (const service of ['project', 'webhook', 'issue', 'delivery'] as const) {
      const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          received.push({ service, method: req.method!, url: req.url!, headers: req.headers, body });
          const answer = answers.get(service) ?? { status: 200, body: '{}' };
          if (answer.hang) return void hanging.push(res);
          res.writeHead(answer.status, answer.body === undefined ? {} : { 'content-type': 'application/json' });
          res.end(answer.body);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      urls[service] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
  });

  afterAll(async () => {
    for (const res of hanging) res.destroy();
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  });

  beforeEach(() => {
    received.length = 0;
    answers.clear();
  });

  const api = (timeoutMs?: number) => new ServiceApi({ urls, identitySigner: { name: 'console', key: keys.privateKey }, timeoutMs }).as(identity);

  it('sends each typed call to the service that serves its path, with the identity signed for that exact path', async () => {
    answers.set('delivery', { status: 200, body: JSON.stringify({ data: [], next_cursor: null }) });
    const list = await api().GET('/teams/{team}/webhooks/{webhook}/deliveries', { params: { path: { team: 7, webhook: 5 }, query: { limit: 20, cursor: 'abc_-=' } } });
    expect(list.data).toEqual({ data: [], next_cursor: null });
    const [request] = received;
    expect(request).toMatchObject({ service: 'delivery', method: 'GET', url: '/api/v1/teams/7/webhooks/5/deliveries?limit=20&cursor=abc_-%3D' });
    expect(request!.headers.accept).toBe('application/json');
    expect(request!.headers.authorization).toBeUndefined();
    expect(verifyIdentity({ console: keys.publicKey }, 'GET', request!.url, request!.headers)).toEqual(identity);
  });

  it('sends the JSON body, and gives back a 4xx with its error body', async () => {
    const refusal = { message: 'The url field is required.', code: 'validation_failed', errors: { url: ['The url field is required.'] } };
    answers.set('webhook', { status: 422, body: JSON.stringify(refusal) });
    const result = await api().POST('/teams/{team}/webhooks', { params: { path: { team: 7 } }, body: { url: '', events: ['issue.created'] } });
    expect(result.response.status).toBe(422);
    expect(result.error).toEqual(refusal);
    expect(received[0]).toMatchObject({ service: 'webhook', method: 'POST', url: '/api/v1/teams/7/webhooks', body: JSON.stringify({ url: '', events: ['issue.created'] }) });
    expect(received[0]!.headers['content-type']).toBe('application/json');
    expect(verifyIdentity({ console: keys.publicKey }, 'POST', '/api/v1/teams/7/webhooks', received[0]!.headers)).toEqual(identity);
    expect(requestOf(result.response)).toBe('POST /api/v1/teams/7/webhooks');
  });

  it('answers a 204, or a 2xx with an empty body, with no data', async () => {
    answers.set('webhook', { status: 204 });
    const deleted = await api().DELETE('/teams/{team}/webhooks/{webhook}', { params: { path: { team: 7, webhook: 5 } } });
    expect(deleted.response.status).toBe(204);
    expect(deleted.data).toBeUndefined();
    answers.set('delivery', { status: 202, body: '' });
    const ping = await api().POST('/teams/{team}/webhooks/{webhook}/ping', { params: { path: { team: 7, webhook: 5 } } });
    expect(ping.response.status).toBe(202);
    expect(ping.data).toBeUndefined();
    expect(received[1]!.headers['content-type']).toBeUndefined();
  });

  it('makes a service failure, a refused signature or an answer that is not JSON a ServiceUnavailableError naming the service', async () => {
    const call = () => api().GET('/teams/{team}/organizations', { params: { path: { team: 7 } } });
    for (const answer of [
      { status: 500, body: '{}' },
      { status: 503, body: '' },
      { status: 401, body: '{"message":"Unauthenticated."}' },
      { status: 200, body: '<html>' },
    ]) {
      answers.set('project', answer);
      await expect(call()).rejects.toEqual(expect.objectContaining({ name: 'ServiceUnavailableError', service: 'project' }));
    }
  });

  it('makes a service that cannot be reached, or does not answer in time, a ServiceUnavailableError', async () => {
    const unreachable = new ServiceApi({ urls: { ...urls, issue: 'http://127.0.0.1:1' }, identitySigner: { name: 'console', key: keys.privateKey } }).as(identity);
    const issues = unreachable.GET('/teams/{team}/organizations/{organization}/projects/{project}/issues', { params: { path: { team: 7, organization: 1, project: 2 } } });
    await expect(issues).rejects.toBeInstanceOf(ServiceUnavailableError);

    answers.set('webhook', { status: 200, hang: true });
    const slow = api(50).GET('/teams/{team}/webhooks', { params: { path: { team: 7 } } });
    await expect(slow).rejects.toEqual(expect.objectContaining({ name: 'ServiceUnavailableError', service: 'webhook' }));
  });
});
