import { API_ROUTES, matchApiRoute } from './api-routes';

const T = '/api/v1/teams/1';

describe('the API route table', () => {
  it.each([
    ['GET', `${T}/organizations`, 'project'],
    ['POST', `${T}/organizations/2/projects`, 'project'],
    ['PATCH', `${T}/organizations/2/projects/3`, 'project'],
    ['GET', `${T}/organizations/2/projects/3`, 'project'],
    ['POST', `${T}/organizations/2/projects/3/issues`, 'issue'],
    ['PATCH', `${T}/organizations/2/projects/3/issues/4`, 'issue'],
    ['GET', `${T}/webhooks`, 'webhook'],
    ['DELETE', `${T}/webhooks/5`, 'webhook'],
    ['POST', `${T}/webhooks/5/ping`, 'delivery'],
    ['GET', `${T}/webhooks/5/deliveries`, 'delivery'],
    ['GET', `${T}/webhooks/5/health`, 'delivery'],
    ['GET', `${T}/deliveries/0b5c2f1e-9a7d-4f1b-8c3e-2d4a6b8c0e1f`, 'delivery'],
    ['POST', `${T}/deliveries/abc123/redeliver`, 'delivery'],
  ])('sends %s %s to the %s service', (method, path, upstream) => {
    const match = matchApiRoute(method, path);
    expect(match.kind).toBe('matched');
    expect(match.kind === 'matched' && match.route.upstream).toBe(upstream);
  });

  it('names the route template and the path parameters', () => {
    expect(matchApiRoute('PATCH', `${T}/organizations/22/projects/333`)).toEqual({
      kind: 'matched',
      route: API_ROUTES.find((route) => route.template === '/api/v1/teams/:team/organizations/:organization/projects/:project'),
      params: { team: '1', organization: '22', project: '333' },
    });
  });

  it('answers 405 with Allow (HEAD where GET is allowed) for a known path and another method', () => {
    expect(matchApiRoute('PUT', `${T}/webhooks/5`)).toMatchObject({ kind: 'method-not-allowed', allow: 'GET, PATCH, DELETE, HEAD' });
    expect(matchApiRoute('DELETE', `${T}/organizations/2/projects`)).toMatchObject({ kind: 'method-not-allowed', allow: 'GET, POST, HEAD' });
    expect(matchApiRoute('GET', `${T}/webhooks/5/ping`)).toMatchObject({ kind: 'method-not-allowed', allow: 'POST' });
  });

  it('treats HEAD as GET', () => {
    expect(matchApiRoute('HEAD', `${T}/webhooks`).kind).toBe('matched');
  });

  it.each([
    '/api/v1/teams',
    '/api/v2/teams/1/webhooks',
    `${T}/unknown`,
    `${T}/webhooks/5/unknown`,
    '/api/v1/teams/abc/webhooks',
    '/api/v1/teams/0/webhooks',
    '/api/v1/teams/01/webhooks',
    '/api/v1/teams/-1/webhooks',
    '/api/v1/teams/1.5/webhooks',
    '/api/v1/teams/99999999999999999/webhooks',
    `${T}/webhooks/x`,
    `${T}/organizations/2/projects/abc`,
    '/api/v1/teams/%31/webhooks',
    `${T}/../2/webhooks`,
    `${T}//webhooks`,
    `${T}/deliveries/has%20space`,
  ])('does not know %s (404)', (path) => {
    expect(matchApiRoute('GET', path)).toEqual({ kind: 'not-found' });
  });

  it('ignores one trailing slash, as the services do', () => {
    expect(matchApiRoute('GET', `${T}/webhooks/`).kind).toBe('matched');
    expect(matchApiRoute('GET', `${T}/webhooks//`).kind).toBe('not-found');
  });

  it('puts every route under /api/v1/teams/:team/', () => {
    for (const route of API_ROUTES) expect(route.template.startsWith('/api/v1/teams/:team/')).toBe(true);
  });
});
