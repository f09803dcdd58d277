// The sign-in throttle against the real token service and its PostgreSQL: counted atomically for
// every console replica, keyed on the account and on the client address, and never on an
// address the client chose.
import { bootstrapTeam, randomId, startSystem, type BootstrapResult, type ServiceHandle, type System } from '@worklane/testing';

jest.setTimeout(120_000);

const MAX_PER_EMAIL = 5;
const MAX_PER_IP = 8;

let system: System;
let owner: BootstrapResult;
let second: ServiceHandle;
let untrusting: ServiceHandle;

beforeAll(async () => {
  system = await startSystem({
    services: ['token', 'project', 'console'],
    env: { LOG_LEVEL: 'warn' },
    serviceEnv: { console: { CONSOLE_LOGIN_MAX_PER_EMAIL: MAX_PER_EMAIL, CONSOLE_LOGIN_MAX_PER_IP: MAX_PER_IP } },
  });
  owner = await bootstrapTeam(system, { teamName: 'Throttled' });
  // A second replica sharing the counts, and one that trusts no proxy (the default).
  second = await system.startService('console', { CONSOLE_TRUST_PROXY: '1' });
  untrusting = await system.startService('console', { CONSOLE_TRUST_PROXY: '' });
}, 120_000);

afterAll(async () => {
  await system?.stop();
});

interface Form {
  cookie: string;
  csrf: string;
}

/** A browser's sign-in form: its pre-session cookie and the CSRF token in the page. */
async function signInForm(base: string): Promise<Form> {
  const page = await fetch(`${base}/login`);
  const cookie = (page.headers.getSetCookie().find((c) => c.startsWith('worklane_login_csrf=')) ?? '').split(';')[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!cookie || !csrf) throw new Error('the sign-in page has no CSRF token');
  return { cookie, csrf };
}

async function signIn(base: string, form: Form, email: string, password: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie, ...headers },
    body: new URLSearchParams({ email, password, _csrf: form.csrf }).toString(),
  });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after') };
}

const consoleUrl = () => system.urls.console;

test('30 concurrent wrong passwords over two replicas: at most the limit get a verdict, the rest 429 with Retry-After', async () => {
  const email = `victim-${randomId()}@example.test`;
  const forms = await Promise.all([signInForm(consoleUrl()), signInForm(second.url)]);
  const results = await Promise.all(
    Array.from({ length: 30 }, (_, i) => signIn(i % 2 === 0 ? consoleUrl() : second.url, forms[i % 2]!, email, `wrong-${i}`, { 'x-forwarded-for': `198.51.100.${i}` })),
  );
  const verdicts = results.filter((r) => r.status === 401);
  const throttled = results.filter((r) => r.status === 429);
  expect(verdicts.length).toBeLessThanOrEqual(MAX_PER_EMAIL);
  expect(verdicts.length + throttled.length).toBe(30);
  for (const r of throttled) expect(Number(r.retryAfter)).toBeGreaterThan(0);
});

test('the account is keyed case-insensitively, across replicas', async () => {
  const email = `Case-${randomId()}@Example.TEST`;
  const form = await signInForm(consoleUrl());
  // These replicas trust one proxy hop, as behind the gateway: each attempt from its own address.
  const from = (i: number) => ({ 'x-forwarded-for': `192.0.2.${i}` });
  for (let i = 0; i < MAX_PER_EMAIL; i += 1) {
    expect((await signIn(consoleUrl(), form, i % 2 ? email.toLowerCase() : email.toUpperCase(), 'wrong', from(i))).status).toBe(401);
  }
  expect((await signIn(second.url, form, email, 'wrong', from(50))).status).toBe(429);
});

test('a correct password clears the account and does not count against the address', async () => {
  const form = await signInForm(consoleUrl());
  // One client address (named by the trusted hop) throughout, allowed 8 failures.
  const from = { 'x-forwarded-for': '192.0.2.200' };
  for (let i = 0; i < MAX_PER_EMAIL - 1; i += 1) expect((await signIn(consoleUrl(), form, owner.email, 'wrong', from)).status).toBe(401);
  expect((await signIn(consoleUrl(), form, owner.email, owner.password, from)).status).toBe(303);
  // The account starts over: MAX_PER_EMAIL - 1 more failures all get verdicts (only one would if it had not).
  for (let i = 0; i < MAX_PER_EMAIL - 1; i += 1) expect((await signIn(second.url, form, owner.email, 'wrong', from)).status).toBe(401);
  // 8 failures from the address and no slot taken by the success: one more attempt is refused.
  expect((await signIn(second.url, form, `other-${randomId()}@example.test`, 'wrong', from)).status).toBe(429);
});

test('without trusted proxies X-Forwarded-For is ignored: the socket address is the key, whatever the client claims', async () => {
  const form = await signInForm(untrusting.url);
  const statuses: number[] = [];
  // Each attempt names another account and claims another address: only the socket counts.
  for (let i = 0; i < MAX_PER_IP + 3; i += 1) {
    const claimed = { 'x-forwarded-for': `203.0.113.${i}` };
    statuses.push((await signIn(untrusting.url, form, `someone-${randomId()}@example.test`, 'wrong', claimed)).status);
  }
  const verdicts = statuses.filter((s) => s === 401).length;
  expect(verdicts).toBeLessThanOrEqual(MAX_PER_IP);
  expect(statuses.slice(-3)).toEqual([429, 429, 429]);
});

test('an over-long e-mail address is refused before any lookup or count', async () => {
  const form = await signInForm(consoleUrl());
  const huge = `${'a'.repeat(60 * 1024)}@example.test`;
  const response = await signIn(consoleUrl(), form, huge, 'wrong');
  expect(response.status).toBe(422);
});
