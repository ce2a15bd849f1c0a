/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser: they are typed against the DOM.
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { launchChromium, seriousAxeViolations } from './support/browser';
import { buildConsole } from './support/console-build';
import { startTestApp, TestApp } from './support/test-app';

/*
 * The console's Keys and Accounts pages (contract §12, §15) in Chromium, with the keys of an admin
 * and of an operator: what GET /v1/me says decides the navigation; a key's secret is shown once
 * with a Copy button; a revoked key stops working.
 */
const SCREENSHOTS = join(__dirname, '..', 'dist', 'console-screenshots');

describe('the console: Keys and Accounts', () => {
  let t: TestApp;
  let origin: string;
  let chromium: { browser: Browser; close: () => Promise<void> };
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  const signIn = async (key: string, path = '/console/keys') => {
    await page.goto(origin + path);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };
  const nav = () => page.getByRole('navigation', { name: 'Main' });
  const status = (key: string) =>
    fetch(`${origin}/v1/events?limit=1`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status);

  beforeAll(async () => {
    buildConsole();
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    chromium = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  beforeEach(async () => {
    context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text()))
        problems.push(`console error: ${message.text()}`);
    });
  });

  afterEach(async () => {
    await context.close();
    expect(problems).toEqual([]);
  });

  it('an admin creates a key, sees its secret once, copies it, revokes it, and it stops working', async () => {
    await signIn(ADMIN_KEYS.acmeAdmin);
    await expect(nav().getByRole('link', { name: 'Keys' }).count()).resolves.toBe(1);
    await expect(nav().getByRole('link', { name: 'Accounts' }).count()).resolves.toBe(0);
    await page.getByRole('heading', { name: 'Keys' }).waitFor();
    await page.getByLabel('Name').fill('console-reader');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.locator('.secret code').textContent())!;
    expect(secret.length).toBeGreaterThanOrEqual(40);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(secret);
    await expect(status(secret)).resolves.toBe(200);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'keys.png'), fullPage: true });

    // Shown once: a reload lists the key by its prefix, never its secret.
    await page.reload();
    const row = page.getByRole('row').filter({ hasText: 'console-reader' });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain(secret.slice(0, 8));
    await expect(page.locator('main').textContent()).resolves.not.toContain(secret);

    await row.getByRole('button', { name: /^Revoke/ }).click();
    await row.getByText(/^revoked /).waitFor();
    const deadline = Date.now() + 6_000;
    while ((await status(secret)) !== 401 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    await expect(status(secret)).resolves.toBe(401);
  });

  it('an operator sees Accounts, creates one and a key of it', async () => {
    await signIn(ADMIN_KEYS.operator, '/console/accounts');
    await expect(nav().getByRole('link', { name: 'Accounts' }).count()).resolves.toBe(1);
    await page.getByRole('heading', { name: 'Accounts' }).waitFor();
    await page.getByLabel('Name').fill('initech');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByText('Account initech created.').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'accounts.png'), fullPage: true });
    await page.getByRole('link', { name: /key\(s\) of initech/ }).click();
    await page.getByRole('heading', { name: /^Keys of acc_/ }).waitFor();
    await page.getByLabel('Name').fill('initech-admin');
    await page.getByLabel('admin').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.locator('.secret code').textContent())!;
    const me = await fetch(`${origin}/v1/me`, { headers: { Authorization: `Bearer ${secret}` } });
    expect(((await me.json()) as { data: { accountName: string } }).data.accountName).toBe('initech');
  });

  it('says in words when a key may not read the events', async () => {
    await signIn(ADMIN_KEYS.acmeAdmin, '/console/events');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('This key may not do that.');
  });
});
