import { createHash } from 'node:crypto';
import { OPERATIONS } from '@worklane/api-contract';
import { API_ROUTES, PUBLIC_API_ROUTES, matchPublicApiRoute } from '@worklane/http';
import { inlineScriptHashes, loadApiDescription, referencePolicy } from './api-description';

/** `/api/v1/teams/:team/webhooks` → `/teams/{team}/webhooks`, as the document writes paths under its server `/api/v1`. */
const documented = (template: string) => template.replace(/^\/api\/v1/, '').replace(/:(\w+)/g, '{$1}');

describe('the OpenAPI document and the route table', () => {
  it('describe the same operations: every method of every route, and nothing else', () => {
    const routed = [
      ...API_ROUTES.flatMap((route) => route.methods.map((method) => `${method} ${documented(route.template)}`)),
      ...PUBLIC_API_ROUTES.filter((route) => route.serves === 'api-description').flatMap((route) => route.methods.map((method) => `${method} ${documented(route.template)}`)),
    ].sort();
    const described = OPERATIONS.map((operation) => `${operation.method.toUpperCase()} ${operation.path}`).sort();
    expect(described).toEqual(routed);
  });

  it('marks as public exactly the routes the gateway serves without a token', () => {
    expect(OPERATIONS.filter((operation) => operation.public).map((operation) => `/api/v1${operation.path}`)).toEqual(
      PUBLIC_API_ROUTES.filter((route) => route.serves === 'api-description').map((route) => route.template),
    );
  });

  it('matches the public routes with one trailing slash, HEAD as GET, and 405 for other methods', () => {
    expect(matchPublicApiRoute('GET', '/api/v1/openapi.json')).toMatchObject({ kind: 'matched', route: { serves: 'api-description' } });
    expect(matchPublicApiRoute('HEAD', '/api/v1/reference/')).toMatchObject({ kind: 'matched', route: { serves: 'api-reference' } });
    expect(matchPublicApiRoute('POST', '/api/v1/openapi.json')).toMatchObject({ kind: 'method-not-allowed', allow: 'GET, HEAD' });
    expect(matchPublicApiRoute('GET', '/api/v1/openapi.yaml')).toBeUndefined();
  });
});

describe('the reference page', () => {
  it('is built, and its policy allows exactly its own inline scripts and connections to this origin', () => {
    const { json, referenceHtml } = loadApiDescription();
    expect(JSON.parse(json).openapi).toBe('3.1.0');
    expect(referenceHtml).toMatch(/<html/i);
    const policy = referencePolicy(referenceHtml!);
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toContain("default-src 'none'");
    expect(policy).not.toMatch(/script-src[^;]*unsafe/);
    // Nothing is loaded from elsewhere: no script or stylesheet with a source.
    expect(referenceHtml).not.toMatch(/<script[^>]+src=/i);
    expect(referenceHtml).not.toMatch(/<link[^>]+rel="?(stylesheet|modulepreload)/i);
  });

  it('hashes each inline script as the browser does', () => {
    const html = '<p>x</p><script>alert(1)</script><script type="module">\nlet a = 2;\n</script><script src="/x.js"></script>';
    const sha = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    expect(inlineScriptHashes(html)).toEqual([sha('alert(1)'), sha('\nlet a = 2;\n')]);
  });
});
