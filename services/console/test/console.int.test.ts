// The console end to end: the whole system behind the gateway, driven in headless Chromium the
// way a person uses it, with the API and a real HTTPS receiver checking the effects.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { api, bootstrapTeam, startSystem, type BootstrapResult, type System } from '@worklane/testing';
import { launchBrowser, type Browser } from './support/browser';
import { startHttpsReceiver, type HttpsReceiver } from './support/receiver';

// Deliveries are asynchronous: a test may reload a page for a while before they show.
jest.setTimeout(90_000);

const ARTIFACTS = join(__dirname, '..', 'test-artifacts');
const LOGIN_MAX_PER_EMAIL = 3;

let system: System;
let receiver: HttpsReceiver;
let browser: Browser;
let page: Page;
let owner: BootstrapResult;
let outsider: BootstrapResult;
let projectId: number;

/** The console as people reach it: the gateway's root. */
const consoleUrl = (path: string) => `${system.gatewayUrl}${path}`;

/** The text of the first match, once it is on the page (playwright-core has no web-first expect). */
async function text(locator: Locator): Promise<string> {
  await locator.first().waitFor();
  return (await locator.first().textContent()) ?? '';
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function signIn(email: string, password: string): Promise<void> {
  await page.goto(consoleUrl('/login'));
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  receiver = await startHttpsReceiver();
  system = await startSystem({
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn' },
    serviceEnv: {
      delivery: { NODE_EXTRA_CA_CERTS: receiver.caFile },
      console: { CONSOLE_LOGIN_MAX_PER_EMAIL: LOGIN_MAX_PER_EMAIL, CONSOLE_SIGNUP_ENABLED: 'true' },
    },
  });
  owner = await bootstrapTeam(system, { teamName: 'Acme Platform', organizationName: 'Acme Inc' });
  outsider = await bootstrapTeam(system, { teamName: 'Rival Labs', organizationName: 'Rival Inc', tokenName: 'rival-secret-token' });
  const project = await api(system, owner.token).post(`/teams/${owner.team_id}/organizations/${owner.organization_id}/projects`, {
    name: 'Backend API',
    description: 'The public API',
    github_repository: 'acme/backend-api',
  });
  expect(project.status).toBe(201);
  projectId = project.body.id;
  browser = await launchBrowser();
  page = browser.page;
  // Deletions ask first; the person says yes.
  page.on('dialog', (dialog) => void dialog.accept());
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
  await receiver?.close();
});

test('a wrong password is refused in words, the right one signs in to the team overview', async () => {
  await signIn(owner.email, 'not-the-password');
  expect(await text(page.getByRole('alert'))).toMatch(/email address or password is not right/);
  await signIn(owner.email, owner.password);
  await page.waitForURL(consoleUrl(`/teams/${owner.team_id}`));
  expect(await text(page.getByRole('heading', { level: 1 }))).toMatch('Acme Platform');
  await page.getByRole('heading', { name: /Acme Inc/ }).waitFor();
  await page.getByRole('rowheader', { name: /Backend API/ }).waitFor();
  await screenshot('sign-in-overview');
});

test('a token created in the console works against the API until it is deleted, then gets 401', async () => {
  await page.getByRole('link', { name: 'API tokens' }).click();
  await page.getByLabel('Token name').fill('CI deploy');
  await page.getByRole('button', { name: 'Create token' }).click();
  await page.getByText('This is the only time the token is shown').waitFor();
  const value = await page.getByLabel('Token value').inputValue();
  expect(value).toMatch(/^wl_/);
  await screenshot('api-tokens-created');

  const projects = `/teams/${owner.team_id}/organizations/${owner.organization_id}/projects`;
  const withToken = api(system, value);
  const allowed = await withToken.get(projects);
  expect(allowed.status).toBe(200);
  expect(allowed.body.data.map((project: { name: string }) => project.name)).toEqual(['Backend API']);

  // The list shows it; the value itself is never shown again.
  await page.goto(consoleUrl(`/teams/${owner.team_id}/settings/tokens`));
  expect(await page.content()).not.toContain(value);
  const row = page.getByRole('row', { name: /CI deploy/ });
  expect(await text(row)).toMatch(/UTC/);
  await row.getByRole('button', { name: /Delete/ }).click();
  expect(await text(page.getByRole('status'))).toMatch(/token was deleted/);
  expect(await page.getByRole('row', { name: /CI deploy/ }).count()).toBe(0);
  await screenshot('api-tokens');

  const refused = await withToken.get(projects);
  expect(refused.status).toBe(401);
  expect(refused.body).toEqual({ message: 'Unauthenticated.', code: 'unauthenticated' });
});

test("the API's validation message is shown beside the field it is about", async () => {
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('link', { name: 'Add webhook' }).click();
  await page.getByLabel('Payload URL').fill('http://example.com/not-https');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  const url = page.getByLabel('Payload URL');
  expect(await url.getAttribute('aria-invalid')).toMatch('true');
  const message = page.locator('#webhook-url-error');
  await message.waitFor();
  expect((await message.textContent())!.length).toBeGreaterThan(5);
  expect(await url.getAttribute('aria-describedby')).toMatch(/webhook-url-error/);
  // What was typed is kept, so the person only fixes what is wrong.
  expect(await url.inputValue()).toBe('http://example.com/not-https');
  await screenshot('webhooks-validation');
});

test('a webhook added in the console receives an issue created through the API, and its log shows the attempt', async () => {
  await page.goto(consoleUrl(`/teams/${owner.team_id}/settings/webhooks/new`));
  await page.getByLabel('Payload URL').fill(receiver.url);
  await page.getByRole('button', { name: 'Generate' }).click();
  const secret = await page.getByLabel('Signing secret (optional)').inputValue();
  expect(secret).toMatch(/^[0-9a-f]{64}$/);
  await page.getByRole('button', { name: 'Add webhook' }).click();
  expect(await text(page.getByRole('status').first())).toMatch(/webhook was added/);

  const issue = await api(system, owner.token).post(`/teams/${owner.team_id}/organizations/${owner.organization_id}/projects/${projectId}/issues`, {
    title: 'Checkout fails for guests',
  });
  expect(issue.status).toBe(201);

  // Delivery is asynchronous: reload the log until the attempt is there (bounded).
  const attempt = page.locator('table.attempts tbody tr');
  expect(await reloadUntil(attempt, 1)).toBeGreaterThanOrEqual(1);
  expect(await text(attempt.first())).toMatch('HTTP 200');
  expect(await text(attempt.first())).toMatch(/\d+ ms|\d+\.\d s/);
  expect(await text(attempt.first())).toMatch('received');
  expect(await text(page.locator('.delivery').first())).toMatch('issue.created');
  expect(await text(page.locator('.delivery').first())).toMatch('Succeeded');
  expect(receiver.received.some((delivery) => delivery.body.includes('Checkout fails for guests'))).toBe(true);

  await page.getByRole('link', { name: 'Overview' }).click();
  const recent = page.getByRole('row', { name: /Checkout fails for guests/ });
  expect(await text(recent)).toMatch(/BACKENDAPI-1.*Backend API.*Triage/s);
  await screenshot('overview');
});

/** Reloads the page until `locator` has at least `count` matches (bounded), and returns how many it has. */
async function reloadUntil(locator: Locator, count: number): Promise<number> {
  for (let tries = 0; tries < 60 && (await locator.count()) < count; tries += 1) {
    await page.waitForTimeout(500);
    await page.reload();
  }
  return locator.count();
}

test('from the delivery log a person sends a ping, redelivers, deactivates and deletes the webhook', async () => {
  await page.goto(consoleUrl(`/teams/${owner.team_id}/settings/webhooks`));
  await page.getByRole('link', { name: /Delivery log/ }).click();
  const deliveries = page.locator('li.delivery');
  const before = await deliveries.count();

  await page.getByRole('button', { name: 'Send ping' }).click();
  expect(await text(page.getByRole('status'))).toMatch(/ping is on its way/);
  expect(await reloadUntil(page.locator('li.delivery:has(code.event:text-is("ping")) table.attempts tbody tr'), 1)).toBeGreaterThanOrEqual(1);
  expect(receiver.received.some((delivery) => delivery.headers['x-webhook-event'] === 'ping')).toBe(true);

  const issueDelivery = page.locator('li.delivery', { has: page.locator('code.event', { hasText: 'issue.created' }) }).first();
  await issueDelivery.getByRole('button', { name: /Redeliver/ }).click();
  expect(await text(page.getByRole('status'))).toMatch(/will be sent again/);
  expect(await reloadUntil(page.locator('li.delivery:has-text("redelivery of")'), 1)).toBe(1);
  expect(await deliveries.count()).toBe(before + 2);

  await page.getByRole('button', { name: /^Deactivate/ }).click();
  expect(await text(page.getByRole('status'))).toMatch(/webhook is inactive/);
  expect(await text(page.locator('h1 + .badge'))).toBe('Inactive');
  const webhooks = await api(system, owner.token).get(`/teams/${owner.team_id}/webhooks`);
  expect(webhooks.body.data.map((webhook: { active: boolean }) => webhook.active)).toEqual([false]);
  await screenshot('webhook-delivery-log');

  await page.getByRole('button', { name: /^Delete/ }).click();
  expect(await text(page.getByRole('status'))).toMatch(/webhook was deleted/);
  expect(await text(page.locator('main'))).toMatch(/No webhooks yet/);
  expect((await api(system, owner.token).get(`/teams/${owner.team_id}/webhooks`)).body).toEqual({ data: [] });
  await screenshot('webhooks');
});

test("another team's pages answer 404 and show none of its data", async () => {
  for (const path of ['', '/settings/tokens', '/settings/webhooks', '/settings/webhooks/new']) {
    const response = await page.goto(consoleUrl(`/teams/${outsider.team_id}${path}`));
    expect(response!.status()).toBe(404);
    const html = await page.content();
    expect(html).not.toContain('Rival');
    expect(html).not.toContain('rival-secret-token');
  }
  expect(await text(page.getByRole('heading', { level: 1 }))).toMatch('Page not found');
  await screenshot('other-team-not-found');
});

test('signing out ends the session, and repeated wrong passwords are slowed down with a 429', async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  expect(await text(page.getByRole('status'))).toMatch('You have signed out.');
  const protectedPage = await page.goto(consoleUrl(`/teams/${owner.team_id}/settings/tokens`));
  expect(protectedPage!.url()).toContain('/login?next=');

  for (let attempt = 0; attempt < LOGIN_MAX_PER_EMAIL; attempt += 1) await signIn(outsider.email, `wrong-${attempt}`);
  const throttled = page.waitForResponse((response) => response.url().endsWith('/login') && response.request().method() === 'POST');
  await signIn(outsider.email, outsider.password);
  expect((await throttled).status()).toBe(429);
  expect(await text(page.getByRole('alert'))).toMatch(/Too many sign-in attempts\. Wait \d+ minutes? and try again\./);
  await screenshot('sign-in-throttled');
});

test('with sign-up enabled, a visitor creates an account and a team and lands in it', async () => {
  await page.goto(consoleUrl('/login'));
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Your name').fill('Grace Hopper');
  await page.getByLabel('Email').fill(`grace-${Date.now()}@example.test`);
  await page.getByLabel('Password').fill('short');
  await page.getByLabel('Team name').fill('Compilers');
  await page.getByRole('button', { name: 'Create account' }).click();
  expect(await text(page.locator('#password-error'))).toMatch('Use at least 8 characters.');
  await page.getByLabel('Password').fill('a long enough passphrase');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(/\/teams\/\d+$/);
  expect(await text(page.getByRole('heading', { level: 1 }))).toMatch('Compilers');
  expect(await text(page.locator('main'))).toMatch(/no organizations yet/);
  await screenshot('sign-up-new-team');
});

test('the footer of every page links to the API reference, which the gateway serves beside the console', async () => {
  // Signed in or not (the tests before may leave either), the console's root answers a page.
  await page.goto(consoleUrl('/'));
  const link = page.getByRole('contentinfo').getByRole('link', { name: 'API reference' });
  const [response] = await Promise.all([page.waitForResponse(consoleUrl('/api/v1/reference')), link.click()]);
  expect(response.status()).toBe(200);
  expect(await page.title()).toBe('Worklane API reference');
});
