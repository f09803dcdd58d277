import { generateKeyPairSync } from 'node:crypto';
import pino from 'pino';
import request from 'supertest';
import { createMetrics, createMetricsServer } from '@worklane/observability';
import { createApp, type ConsoleOptions } from './app';
import type { Accounts } from './clients/accounts';
import { ServiceApi } from './clients/services';

// Every behaviour here is decided before the console asks the token service or any API: a call
// would fail the test.
const accountsNeverCalled = new Proxy({} as Accounts, {
  get: (_target, name) => () => {
    throw new Error(`accounts.${String(name)} must not be called`);
  },
});

function consoleApp(overrides: Partial<ConsoleOptions> = {}) {
  return createApp({
    accounts: accountsNeverCalled,
    services: new ServiceApi({
      identitySigner: { name: 'console', key: generateKeyPairSync('ed25519').privateKey },
      urls: { project: 'http://127.0.0.1:1', webhook: 'http://127.0.0.1:1', issue: 'http://127.0.0.1:1', delivery: 'http://127.0.0.1:1' },
    }),
    logger: pino({ level: 'silent' }),
    metrics: createMetrics('console'),
    isReady: () => true,
    signupEnabled: false,
    secureCookies: false,
    trustProxy: 'loopback',
    login: { windowMs: 60_000, maxPerEmail: 3, maxPerIp: 10 },
    ...overrides,
  });
}

const cookieHeader = (response: request.Response) => ([] as string[]).concat(response.headers['set-cookie'] ?? []);

describe('console app', () => {
  it('sends the security headers on pages, assets and error pages', async () => {
    const app = consoleApp();
    for (const path of ['/login', '/assets/console.css', '/no-such-page']) {
      const response = await request(app).get(path);
      const csp = response.headers['content-security-policy'];
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('same-origin');
    }
  });

  it('serves the sign-in page with a labelled form and a CSRF token bound to an HttpOnly, SameSite=Lax cookie', async () => {
    const response = await request(consoleApp()).get('/login');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.headers['cache-control']).toBe('no-store');
    const cookie = cookieHeader(response).find((value) => value.startsWith('worklane_login_csrf='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    const token = /worklane_login_csrf=([^;]+)/.exec(cookie)![1];
    expect(response.text).toContain(`name="_csrf" value="${token}"`);
    for (const id of ['email', 'password']) {
      expect(response.text).toContain(`<label for="${id}">`);
      expect(response.text).toContain(`id="${id}"`);
    }
    expect(response.text).not.toMatch(/<script>|style="/);
  });

  it('refuses a sign-in without the CSRF token of the sign-in form, before checking any password', async () => {
    const response = await request(consoleApp()).post('/login').type('form').send({ email: 'a@example.com', password: 'secret-password' });
    expect(response.status).toBe(403);
    expect(response.text).toContain('Your sign-in form had expired');
    const forged = await request(consoleApp())
      .post('/login')
      .set('Cookie', `worklane_login_csrf=${'a'.repeat(43)}`)
      .type('form')
      .send({ email: 'a@example.com', password: 'secret-password', _csrf: 'b'.repeat(43) });
    expect(forged.status).toBe(403);
  });

  it('sends people without a session to sign in, keeping the page they wanted', async () => {
    const page = await request(consoleApp()).get('/teams/1/settings/webhooks');
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe('/login?next=%2Fteams%2F1%2Fsettings%2Fwebhooks');
    const form = await request(consoleApp()).post('/teams/1/settings/tokens').type('form').send({ name: 'x' });
    expect(page.status).toBe(303);
    expect(form.headers.location).toBe('/login');
    expect((await request(consoleApp()).get('/')).headers.location).toBe('/login');
  });

  it('marks cookies Secure (and pins HTTPS) behind an HTTPS proxy it trusts, or when told to', async () => {
    const secureCookie = (response: request.Response) => cookieHeader(response).some((value) => /;\s*Secure/i.test(value));
    expect(secureCookie(await request(consoleApp()).get('/login'))).toBe(false);
    expect(secureCookie(await request(consoleApp()).get('/login').set('X-Forwarded-Proto', 'https'))).toBe(true);
    expect(secureCookie(await request(consoleApp({ secureCookies: true })).get('/login'))).toBe(true);
    const https = await request(consoleApp()).get('/login').set('X-Forwarded-Proto', 'https');
    expect(https.headers['strict-transport-security']).toBe('max-age=31536000');
    expect((await request(consoleApp()).get('/login')).headers['strict-transport-security']).toBeUndefined();
    // From a proxy it does not trust, the header is ignored.
    expect(
      secureCookie(
        await request(consoleApp({ trustProxy: '10.9.9.9' }))
          .get('/login')
          .set('X-Forwarded-Proto', 'https'),
      ),
    ).toBe(false);
  });

  it('answers unknown pages with an HTML 404 and keeps sign-up off unless enabled', async () => {
    const missing = await request(consoleApp()).get('/no-such-page');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('Page not found');
    expect((await request(consoleApp()).get('/signup')).status).toBe(404);
    const signup = await request(consoleApp({ signupEnabled: true })).get('/signup');
    expect(signup.status).toBe(200);
    expect(signup.text).toContain('<label for="team">Team name</label>');
  });

  it('serves fingerprinted static assets that browsers may cache', async () => {
    const page = await request(consoleApp()).get('/login');
    const cssPath = /href="(\/assets\/console\.css\?v=[0-9a-f]{12})"/.exec(page.text)![1]!;
    const css = await request(consoleApp()).get(cssPath);
    expect(css.status).toBe(200);
    expect(css.headers['cache-control']).toContain('immutable');
    expect(page.text).toMatch(/<script src="\/assets\/console\.js\?v=[0-9a-f]{12}" defer><\/script>/);
  });

  it('keeps health and readiness, and its metrics on the metrics listener only', async () => {
    const metricsOfConsole = createMetrics('console');
    const app = consoleApp({ metrics: metricsOfConsole });
    expect((await request(app).get('/healthz')).status).toBe(200);
    expect((await request(app).get('/readyz')).status).toBe(200);
    expect((await request(app).get('/metrics')).status).not.toBe(200);
    const metrics = await request(createMetricsServer(metricsOfConsole)).get('/metrics');
    expect(metrics.text).toContain('worklane_console_login_attempts_total');
  });
});
