// The console's pages for a webhook's endpoint, end to end in headless Chromium against the whole
// system: editing a webhook (scope, rate limit, operational events), rotating its secret, its
// health, the notice of an automatic switch-off, recovering what failed, and the delivery log's
// filters and payload view. The delivery service runs with periods of seconds instead of days.
import { createHmac } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { api, bootstrapTeam, startSystem, type BootstrapResult, type System } from '@worklane/testing';
import { launchBrowser, type Browser } from './support/browser';
import { startHttpsReceiver, type HttpsReceiver } from './support/receiver';

jest.setTimeout(120_000);

const ARTIFACTS = join(__dirname, '..', 'test-artifacts');

let system: System;
let receiver: HttpsReceiver;
let browser: Browser;
let page: Page;
let owner: BootstrapResult;
let projectId: number;
let webhookId: number;

const consoleUrl = (path: string) => `${system.gatewayUrl}${path}`;
const webhookPage = () => consoleUrl(`/teams/${owner.team_id}/settings/webhooks/${webhookId}`);
const ownerApi = () => api(system, owner.token);
const webhookApi = () => `/teams/${owner.team_id}/webhooks/${webhookId}`;

async function text(locator: Locator): Promise<string> {
  await locator.first().waitFor();
  return (await locator.first().textContent()) ?? '';
}

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Reloads the page until `locator` has at least one match (bounded); resolves to whether it has. */
async function reloadUntilVisible(locator: Locator, tries = 80): Promise<boolean> {
  for (let attempt = 0; attempt < tries && (await locator.count()) === 0; attempt += 1) {
    await page.waitForTimeout(500);
    await page.reload();
  }
  return (await locator.count()) > 0;
}

/** Polls `check` until it holds (bounded by the number of tries); resolves to its last value. */
async function eventually<T>(check: () => Promise<T> | T, done: (value: T) => boolean, tries = 80): Promise<T> {
  let value = await check();
  for (let attempt = 0; attempt < tries && !done(value); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    value = await check();
  }
  return value;
}

async function createIssue(title: string): Promise<number> {
  const issue = await ownerApi().post(`/teams/${owner.team_id}/organizations/${owner.organization_id}/projects/${projectId}/issues`, { title });
  expect(issue.status).toBe(201);
  return issue.body.id;
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  receiver = await startHttpsReceiver();
  system = await startSystem({
    env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', LOG_LEVEL: 'warn' },
    serviceEnv: {
      delivery: {
        NODE_EXTRA_CA_CERTS: receiver.caFile,
        // One attempt per delivery, so a failure is final at once; days of failures become seconds.
        WEBHOOK_RETRY_SCHEDULE: '0',
        WEBHOOK_FAILING_NOTICE_AFTER_MS: 500,
        WEBHOOK_DISABLE_AFTER_MS: 1_500,
        WEBHOOK_HEALTH_CHECK_INTERVAL_MS: 250,
      },
    },
  });
  owner = await bootstrapTeam(system, { teamName: 'Acme Endpoints', organizationName: 'Acme Inc' });
  const project = await ownerApi().post(`/teams/${owner.team_id}/organizations/${owner.organization_id}/projects`, { name: 'Backend API' });
  expect(project.status).toBe(201);
  projectId = project.body.id;
  browser = await launchBrowser();
  page = browser.page;
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto(consoleUrl('/login'));
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(consoleUrl(`/teams/${owner.team_id}`));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await system?.stop();
  await receiver?.close();
});

test('a webhook is added with a description, a project scope and an operational event, then edited', async () => {
  await page.goto(consoleUrl(`/teams/${owner.team_id}/settings/webhooks/new`));
  await page.getByLabel('Payload URL').fill(receiver.url);
  await page.getByLabel('Description (optional)').fill('Support <desk> sync');
  await page.getByLabel('Project Backend API').check();
  await page.getByLabel(/webhook\.disabled/).check();
  await page.getByLabel('Signing secret (optional)').fill('first-signing-secret-0123456789');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  expect(await text(page.getByRole('status').first())).toMatch(/webhook was added/);
  webhookId = Number(/\/settings\/webhooks\/(\d+)/.exec(page.url())![1]);

  const created = (await ownerApi().get(webhookApi())).body;
  expect(created).toMatchObject({
    description: 'Support <desk> sync',
    filters: { organization_ids: [], project_ids: [projectId] },
    operational_events: ['webhook.disabled'],
    rate_limit_per_second: null,
  });
  expect(await text(page.locator('.webhook-description'))).toBe('Support <desk> sync');
  expect(await text(page.locator('.facts'))).toMatch('Projects: Backend API');

  // The edit form holds the webhook's values; only what changes is sent.
  await page.getByRole('link', { name: 'Edit settings' }).click();
  expect(await page.getByLabel('Project Backend API').isChecked()).toBe(true);
  // Below the API's minimum: its message beside the field.
  await page.getByLabel('Rate limit (optional)').fill('0');
  await page.getByRole('button', { name: 'Save changes' }).click();
  expect((await text(page.locator('#webhook-rate-limit-error'))).length).toBeGreaterThan(5);
  expect((await ownerApi().get(webhookApi())).body.rate_limit_per_second).toBeNull();
  await page.getByLabel('Rate limit (optional)').fill('5');
  await page.getByLabel('Project Backend API').uncheck();
  await page.getByRole('button', { name: 'Save changes' }).click();
  expect(await text(page.getByRole('status').first())).toMatch(/webhook was saved/);
  expect(await text(page.locator('.facts'))).toMatch(/Every organization and project of the team[\s\S]*5 deliveries per second/);
  const edited = (await ownerApi().get(webhookApi())).body;
  expect(edited).toMatchObject({ rate_limit_per_second: 5, filters: { organization_ids: [], project_ids: [] }, description: 'Support <desk> sync' });

  // A URL the API refuses: its message beside the field, nothing changed.
  await page.getByRole('link', { name: 'Edit settings' }).click();
  await page.getByLabel('Payload URL').fill('http://example.com/plain');
  await page.getByRole('button', { name: 'Save changes' }).click();
  expect((await text(page.locator('#webhook-url-error'))).length).toBeGreaterThan(5);
  expect((await ownerApi().get(webhookApi())).body.url).toBe(receiver.url);
  await screenshot('webhook-edit-refused');
});

test('rotating the secret shows the new one once, and deliveries are signed by the new and the old during the overlap', async () => {
  await page.goto(webhookPage());
  await page.getByRole('link', { name: 'Rotate secret' }).click();
  await page.getByLabel('Keep the old secret signing for').selectOption({ label: '1 hour' });
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  const secret = await page.getByRole('textbox', { name: 'New signing secret' }).inputValue();
  expect(secret.length).toBeGreaterThanOrEqual(16);
  expect(await text(page.locator('main'))).toMatch(/This is the only time the secret is shown/);
  await screenshot('webhook-secret-rotated');

  await page.goto(webhookPage());
  expect(await page.content()).not.toContain(secret);
  expect(await text(page.locator('.facts'))).toMatch(/Secret last changed\s*\d+ \w+ \d{4}/);

  const before = receiver.received.length;
  await createIssue('Signed twice');
  const delivery = await eventually(
    () => receiver.received.slice(before).find((received) => received.body.includes('Signed twice')),
    (found) => found !== undefined,
  );
  expect(delivery).toBeDefined();
  const signatures = String(delivery!.headers['webhook-signature']).split(' ');
  expect(signatures.filter((entry) => entry.startsWith('v1,'))).toHaveLength(2);
  expect(delivery!.headers['x-webhook-signature']).toBe(createHmac('sha256', secret).update(delivery!.body).digest('hex'));
});

test('a failing endpoint shows in its health, is switched off with a notice, and recovering re-sends each failed event once with its id', async () => {
  receiver.failWith(503);
  const titles = ['Outage one', 'Outage two'];
  for (const title of titles) await createIssue(title);

  // The health section counts the failures; then the switch-off notice appears.
  await page.goto(webhookPage());
  expect(await reloadUntilVisible(page.getByRole('heading', { name: 'Worklane switched this webhook off' }))).toBe(true);
  expect(await text(page.locator('h1 + .badge'))).toBe('Switched off by Worklane');
  const health = await text(page.locator('section.health'));
  expect(health).toMatch(/Last error\s*HTTP 503/);
  expect(health).toMatch(/Last hour\s*\d+\s*\d+\s*[1-9]/);
  await screenshot('webhook-switched-off');

  const failed = (await ownerApi().get(`${webhookApi()}/deliveries`, { query: { status: 'failed' } })).body.data as { event_id: string }[];
  expect(failed.length).toBeGreaterThanOrEqual(titles.length);
  const failedIds = new Set(failed.map((delivery) => delivery.event_id));

  // Fixed, switched on again (which sends nothing by itself), then recovered from the page.
  receiver.failWith(null);
  const beforeRecovery = receiver.received.length;
  await page
    .locator('.disabled-notice')
    .getByRole('button', { name: /^Activate/ })
    .click();
  expect(await text(page.getByRole('status').first())).toMatch(/webhook is active/);
  expect((await ownerApi().get(webhookApi())).body).toMatchObject({ active: true, disabled_reason: null, disabled_at: null });
  // The form starts before the outage: five minutes before the last success here (the browser
  // leaves out zero seconds).
  const since = await page.getByLabel('From (UTC)', { exact: true }).inputValue();
  expect(since).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/);
  expect(Date.parse(`${since}Z`)).toBeLessThan(Date.now() - 4 * 60_000);
  await page.getByRole('button', { name: 'Recover' }).click();
  await page.waitForURL(/\/recoveries\/\d+$/);
  // The job's page reloads itself until the job is done.
  await page.locator('.heading-row .badge', { hasText: 'Succeeded' }).waitFor({ timeout: 60_000 });
  expect(await text(page.locator('main'))).toMatch(new RegExp(`Events found\\s*${failedIds.size}`));
  await screenshot('webhook-recovery');

  const resent = await eventually(
    () => receiver.received.slice(beforeRecovery).map((received) => JSON.parse(received.body).id as string),
    (ids) => [...failedIds].every((id) => ids.includes(id)),
  );
  expect(new Set(resent)).toEqual(failedIds);
  expect(resent).toHaveLength(failedIds.size);

  // The log's filters: the failed originals alone, then every delivery of one event.
  await page.goto(webhookPage());
  await page.getByLabel('State').selectOption('failed');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/status=failed/);
  const shown = page.locator('li.delivery');
  expect(await shown.count()).toBe(failed.length);
  for (const badge of await page.locator('li.delivery h3 .badge').allTextContents()) expect(badge).toBe('Failed');

  const [oneEvent] = [...failedIds];
  await page.getByLabel('State').selectOption('');
  await page.getByLabel('Event id').fill(oneEvent!);
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/event_id=/);
  expect(await shown.count()).toBe(2);
  expect(await text(page.locator('li.delivery', { hasText: 'sent again by' }))).toMatch(/recovery \d+/);
  await screenshot('webhook-log-filtered');

  // The payload and what each attempt exchanged, never the secret.
  await page
    .locator('li.delivery', { hasText: 'sent again by' })
    .getByRole('link', { name: /Payload and exchanges/ })
    .click();
  expect(await text(page.locator('pre.payload'))).toMatch(/"title": "Outage (one|two)"/);
  expect(await text(page.locator('table.headers').first())).toMatch(/webhook-signature/);
  expect(await text(page.locator('section.attempt').first())).toMatch('HTTP 200');
  expect(await page.content()).not.toMatch(/first-signing-secret/);
  await screenshot('webhook-delivery-payload');
});
