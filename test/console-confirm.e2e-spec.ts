/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser: they are typed against the DOM.
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { launchChromium, seriousAxeViolations } from './support/browser';
import { buildConsole } from './support/console-build';
import { bearer, startTestApp, TestApp } from './support/test-app';

/*
 * The console's actions that cannot be taken back (docs/contract.md §12, §15, §16), in Chromium
 * against the real service: a key's revoke and rotation, a destination's delete. Each is a danger
 * button (told apart by more than its colour) that opens the one in-page confirmation of ui.tsx:
 * it names what will happen, Cancel (or Escape) changes nothing and gives the focus back, the
 * confirming button does it. A rotation's overlap is chosen there and reaches the API; a revoked
 * key's secret leaves the screen; names are text, never HTML.
 */
const SCREENSHOTS = join(__dirname, '..', 'dist', 'console-screenshots');

interface KeyBody {
  id: string;
  name: string;
  prefix: string;
  secret: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

describe('the console: confirming what cannot be taken back', () => {
  let t: TestApp;
  let origin: string;
  let acme: string;
  let chromium: { browser: Browser; close: () => Promise<void> };
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  const signIn = async (path: string) => {
    await page.goto(origin + path);
    await page.getByLabel('API key').fill(ADMIN_KEYS.acmeAdmin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };
  const status = (key: string) =>
    fetch(`${origin}/v1/me`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status);
  /** The key's answer once the service has had its 5 s to hear of a change (docs/contract.md §12). */
  const settledStatus = async (key: string, expected: number) => {
    const deadline = Date.now() + 6_000;
    while ((await status(key)) !== expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    return status(key);
  };
  const keysByApi = async () =>
    (
      (
        await t
          .http()
          .get(`/v1/accounts/${acme}/keys`)
          .query({ limit: 100 })
          .set(...bearer(ADMIN_KEYS.acmeAdmin))
          .expect(200)
      ).body as { data: KeyBody[] }
    ).data;
  const createKey = async (name: string) =>
    (
      (
        await t
          .http()
          .post(`/v1/accounts/${acme}/keys`)
          .set(...bearer(ADMIN_KEYS.acmeAdmin))
          .send({ name, scopes: ['read'] })
          .expect(201)
      ).body as { data: KeyBody }
    ).data;
  const row = (name: string) => page.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });
  const focused = () =>
    page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent);
  /** What tells a button apart, as the browser draws it: its fill, text, border and the mark before its words. */
  const looks = (button: Locator) =>
    button.evaluate((b) => {
      const style = getComputedStyle(b);
      return {
        background: style.backgroundColor,
        color: style.color,
        borderWidth: style.borderTopWidth,
        fontWeight: style.fontWeight,
        mark: getComputedStyle(b, '::before').content,
      };
    });
  const BLUE = { background: 'rgb(29, 78, 216)', color: 'rgb(255, 255, 255)', borderWidth: '1px', mark: 'none' };
  const OUTLINED_DANGER = {
    background: 'rgb(255, 255, 255)',
    color: 'rgb(185, 28, 28)',
    borderWidth: '2px',
    fontWeight: '700',
    mark: expect.stringContaining('⚠') as unknown,
  };
  const SOLID_DANGER = { ...OUTLINED_DANGER, background: 'rgb(185, 28, 28)', color: 'rgb(255, 255, 255)' };

  beforeAll(async () => {
    buildConsole();
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys(), streamDelivery: false });
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    acme = (
      (
        await t
          .http()
          .get('/v1/me')
          .set(...bearer(ADMIN_KEYS.acmeAdmin))
          .expect(200)
      ).body as { data: { accountId: string } }
    ).data.accountId;
    chromium = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  beforeEach(async () => {
    context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 } });
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

  it('Revoke is a danger button that asks first: Cancel and Escape change nothing, Yes revokes and clears the secret', async () => {
    await signIn('/console/keys');
    await page.getByLabel('Name').fill('ci-deploy');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.locator('.secret code').textContent())!;
    const prefix = secret.slice(0, 8);
    const revoke = row('ci-deploy').getByRole('button', { name: `Revoke ci-deploy (${prefix})…` });
    await expect(looks(revoke)).resolves.toEqual(OUTLINED_DANGER);
    await expect(looks(row('ci-deploy').getByRole('button', { name: /^Rotate/ }))).resolves.toEqual(OUTLINED_DANGER);
    await expect(looks(page.getByRole('button', { name: 'Create key' }))).resolves.toMatchObject(BLUE);

    const question = page.getByRole('region', { name: `Revoke key ‘ci-deploy’ (prefix ${prefix})?` });
    await revoke.click();
    await question.waitFor();
    await expect(question.textContent()).resolves.toContain('Requests with it are refused within 5 seconds');
    // It opens on Cancel, never on the action.
    await expect(focused()).resolves.toBe('Cancel');
    const yes = question.getByRole('button', { name: 'Yes, revoke ci-deploy' });
    await expect(looks(yes)).resolves.toEqual(SOLID_DANGER);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'keys-revoke-confirm.png'), fullPage: true });
    await page.setViewportSize({ width: 360, height: 740 });
    await question.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, '360-keys-revoke-confirm.png'), fullPage: true });
    const { scroll, client } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    expect(scroll).toBeLessThanOrEqual(client);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });

    // Cancel: nothing sent, the focus back on Revoke, the key still works and its secret still shows.
    await question.getByRole('button', { name: 'Cancel' }).click();
    await question.waitFor({ state: 'detached' });
    await expect(focused()).resolves.toBe(`Revoke ci-deploy (${prefix})…`);
    // Escape from the keyboard does the same: Enter on the focused Revoke opens it again.
    await page.keyboard.press('Enter');
    await question.waitFor();
    await page.keyboard.press('Escape');
    await question.waitFor({ state: 'detached' });
    await expect(focused()).resolves.toBe(`Revoke ci-deploy (${prefix})…`);
    await expect(page.locator('.secret code').textContent()).resolves.toBe(secret);
    await new Promise((r) => setTimeout(r, 500));
    await expect(status(secret)).resolves.toBe(200);
    await expect(keysByApi()).resolves.toContainEqual(expect.objectContaining({ name: 'ci-deploy', revokedAt: null }));

    // From the keyboard: Enter opens it, Tab reaches the action, Enter revokes.
    await page.keyboard.press('Enter');
    await question.waitFor();
    await page.keyboard.press('Tab');
    await expect(focused()).resolves.toBe('Yes, revoke ci-deploy');
    await page.keyboard.press('Enter');
    await page.getByText(`Key ci-deploy (prefix ${prefix}) revoked`).waitFor();
    await question.waitFor({ state: 'detached' });
    // Its button is gone with it: the focus is on what was done, not lost.
    await expect(focused()).resolves.toMatch(/^Key ci-deploy \(prefix .+\) revoked/);
    await row('ci-deploy')
      .getByText(/^revoked /)
      .waitFor();
    await expect(page.locator('.secret').count()).resolves.toBe(0);
    await expect(page.locator('main').textContent()).resolves.not.toContain(secret);
    await expect(settledStatus(secret, 401)).resolves.toBe(401);
  });

  it('Rotate asks for the overlap, says when the old key stops, and the chosen overlap reaches the API', async () => {
    const old = await createKey('rotating');
    // On a phone, from the last card far down the page: the question opens whole on screen.
    await page.setViewportSize({ width: 360, height: 740 });
    await signIn('/console/keys');
    const question = page.getByRole('region', { name: `Rotate key ‘rotating’ (prefix ${old.prefix})?` });
    await row('rotating')
      .getByRole('button', { name: /^Rotate/ })
      .click();
    await question.waitFor();
    const box = (await question.boundingBox())!;
    // Whole in the viewport, to the pixel (its edges may fall between two: scrolling moves whole pixels).
    expect(box.y).toBeGreaterThanOrEqual(-1);
    expect(box.y + box.height).toBeLessThanOrEqual(741);
    await page.screenshot({ path: join(SCREENSHOTS, '360-keys-rotate-confirm.png') });
    const overlap = question.getByLabel(/^Overlap in seconds/);
    // The service's default, an hour, already there, and the field has the focus.
    await expect(overlap.inputValue()).resolves.toBe('3600');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('rotate-overlap');
    await expect(question.textContent()).resolves.toMatch(
      /The old key keeps working for 1 hour, until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, then it is refused\./,
    );
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.screenshot({ path: join(SCREENSHOTS, 'keys-rotate-confirm.png'), fullPage: true });
    expect(await seriousAxeViolations(page)).toEqual([]);

    // Outside 0–86,400: said in words, and nothing is sent.
    await overlap.fill('86401');
    await expect(question.textContent()).resolves.toContain('Enter whole seconds from 0 to 86,400.');
    await question.getByRole('button', { name: 'Yes, rotate rotating' }).click();
    await expect(keysByApi().then((keys) => keys.filter((k) => k.name === 'rotating'))).resolves.toHaveLength(1);

    await overlap.fill('600');
    await expect(question.textContent()).resolves.toContain('The old key keeps working for 10 minutes, until ');
    const asked = Date.now();
    await question.getByRole('button', { name: 'Yes, rotate rotating' }).click();
    const panel = page.locator('.secret');
    await panel.getByText(/^The new secret of/).waitFor();
    const secret = (await panel.locator('code').textContent())!;
    expect(secret).not.toBe(old.secret);

    const keys = (await keysByApi()).filter((k) => k.name === 'rotating');
    expect(keys).toHaveLength(2);
    const before = keys.find((k) => k.id === old.id)!;
    expect(Math.abs(Date.parse(before.expiresAt!) - (asked + 600_000))).toBeLessThan(30_000);
    expect(before.revokedAt).toBeNull();
    // The page says the instant the service stored, in the console's zone (UTC), to the second.
    const shown = before.expiresAt!.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
    await expect(panel.textContent()).resolves.toContain(
      `The old key (prefix ${old.prefix}) keeps working until ${shown}, then it is refused.`,
    );
    await expect(panel.locator('time').getAttribute('datetime')).resolves.toBe(before.expiresAt);
    await expect(status(old.secret)).resolves.toBe(200);
    await expect(status(secret)).resolves.toBe(200);
  });

  it('names are text in the confirmation and after it, never HTML', async () => {
    const name = '<img src=x onerror="window.__keysXss=1">';
    const hostile = await createKey(name);
    await signIn('/console/keys');
    await row(name)
      .getByRole('button', { name: /^Rotate/ })
      .click();
    await page.getByRole('region', { name: `Rotate key ‘${name}’ (prefix ${hostile.prefix})?` }).waitFor();
    await page.keyboard.press('Escape');
    await row(name)
      .getByRole('button', { name: /^Revoke/ })
      .click();
    const question = page.getByRole('region', { name: `Revoke key ‘${name}’ (prefix ${hostile.prefix})?` });
    await question.getByRole('button', { name: `Yes, revoke ${name}` }).click();
    await page.getByText(`Key ${name} (prefix ${hostile.prefix}) revoked`).waitFor();
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (window as unknown as { __keysXss?: number }).__keysXss)).resolves.toBe(undefined);
  });

  it("Streams' Delete… is a danger button that opens the same confirmation; Pause stays blue", async () => {
    const made = await t
      .http()
      .post(`/v1/accounts/${acme}/destinations`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ name: 'siem-hook', kind: 'webhook', url: 'https://siem.example.com/hook' })
      .expect(201);
    expect((made.body as { data: { name: string } }).data.name).toBe('siem-hook');
    await signIn('/console/streams');
    const remove = row('siem-hook').getByRole('button', { name: 'Delete siem-hook…' });
    await expect(looks(remove)).resolves.toEqual(OUTLINED_DANGER);
    await expect(looks(row('siem-hook').getByRole('button', { name: 'Pause siem-hook' }))).resolves.toMatchObject(BLUE);
    await expect(looks(row('siem-hook').getByRole('button', { name: 'Replay siem-hook…' }))).resolves.toMatchObject(
      BLUE,
    );
    await remove.click();
    const question = page.getByRole('region', { name: 'Delete destination ‘siem-hook’?' });
    await expect(question.textContent()).resolves.toContain('Delivery to https://siem.example.com/hook stops for good');
    await expect(focused()).resolves.toBe('Cancel');
    await expect(looks(question.getByRole('button', { name: 'Yes, delete siem-hook' }))).resolves.toEqual(SOLID_DANGER);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await expect(focused()).resolves.toBe('Delete siem-hook…');
    await page.keyboard.press('Enter');
    await question.getByRole('button', { name: 'Yes, delete siem-hook' }).click();
    await page.getByText('siem-hook deleted.').waitFor();
    await expect(focused()).resolves.toBe('siem-hook deleted.');
    await row('siem-hook').waitFor({ state: 'detached' });
  });
});
