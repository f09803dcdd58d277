import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { OPERATIONS } from '@worklane/api-contract';
import { API_ROUTES, PUBLIC_API_ROUTES, matchPublicApiRoute } from '@worklane/http';
import { apiDescriptionHandler, inlineScriptHashes, loadApiDescription, referencePolicy, type ApiDescription } from './api-description';

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
    const { json, reference } = loadApiDescription();
    expect(JSON.parse(json).openapi).toBe('3.1.0');
    const referenceHtml = fs.readFileSync(reference!.file, 'utf8');
    expect(referenceHtml).toMatch(/<html/i);
    const policy = reference!.policy;
    expect(policy).toBe(referencePolicy(referenceHtml));
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

describe('serving the reference page', () => {
  /** An express app answering the public routes as the gateway does, on a port of its own. */
  async function serve(description: ApiDescription): Promise<{ url: string; close: () => Promise<void> }> {
    const answer = apiDescriptionHandler(description);
    const app = express();
    app.use((req, res) => {
      const match = matchPublicApiRoute(req.method, req.path);
      if (match?.kind !== 'matched' || !answer(match.route, res)) res.status(404).end();
    });
    const server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }

  it('sends the page from its file with its policy, 304 to a browser that has it, and its headers alone to HEAD', async () => {
    const description = loadApiDescription();
    const server = await serve(description);
    try {
      const page = await fetch(`${server.url}/api/v1/reference`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('content-security-policy')).toBe(description.reference!.policy);
      expect(page.headers.get('cache-control')).toBe('public, max-age=300');
      expect(await page.text()).toBe(fs.readFileSync(description.reference!.file, 'utf8'));

      // node:http, not fetch: fetch marks a request with If-None-Match `no-cache`, as browsers' fetch() does.
      const again = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`${server.url}/api/v1/reference`, { headers: { 'if-none-match': page.headers.get('etag')! } }, resolve).on('error', reject),
      );
      again.resume();
      expect(again.statusCode).toBe(304);

      const head = await fetch(`${server.url}/api/v1/reference`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(Number(head.headers.get('content-length'))).toBe(fs.statSync(description.reference!.file).size);
      expect(await head.text()).toBe('');
    } finally {
      await server.close();
    }
  });

  it('answers 404, not a hang, when the page file is gone', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wl-reference-')), 'reference.html');
    const server = await serve({ json: '{}', reference: { file, policy: "default-src 'none'" } });
    try {
      expect((await fetch(`${server.url}/api/v1/reference`)).status).toBe(404);
    } finally {
      await server.close();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });
});
