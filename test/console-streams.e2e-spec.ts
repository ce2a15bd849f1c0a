/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser: they are typed against the DOM.
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { crampedTexts, launchChromium, seriousAxeViolations } from './support/browser';
import { buildConsole } from './support/console-build';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * The console's Streams page (docs/contract.md §15, §16) in Chromium, against the real service: an admin
 * creates a webhook to a receiver on this machine (STREAM_ALLOW_PRIVATE_NETWORKS=true), sees its
 * secret once, pauses, resumes, replays, rotates and deletes it; states and a receiver's error are
 * words and text (never HTML); refusals are said in words; an operator reaches another account's
 * streams from Accounts; a read key has no Streams.
 */
const SCREENSHOTS = join(__dirname, '..', 'dist', 'console-screenshots');
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

interface DestinationBody {
  id: string;
  name: string;
  state: string;
}

describe('the console: Streams', () => {
  let t: TestApp;
  let origin: string;
  let receiver: Server;
  let receiverUrl: string;
  let chromium: { browser: Browser; close: () => Promise<void> };
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  const signIn = async (key: string, path = '/console/streams') => {
    await page.goto(origin + path);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };
  const nav = () => page.getByRole('navigation', { name: 'Main' });
  const row = (name: string) => page.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });
  const stateOf = (name: string) => row(name).locator('.state');
  const accountIdOf = async (key: string) =>
    (
      (
        await t
          .http()
          .get('/v1/me')
          .set(...bearer(key))
          .expect(200)
      ).body as { data: { accountId: string } }
    ).data.accountId;
  const destinations = async (key: string) =>
    (
      (
        await t
          .http()
          .get(`/v1/accounts/${await accountIdOf(key)}/destinations`)
          .set(...bearer(key))
          .expect(200)
      ).body as { data: DestinationBody[] }
    ).data;
  const createByApi = async (name: string, url: string) =>
    (
      (
        await t
          .http()
          .post(`/v1/accounts/${await accountIdOf(ADMIN_KEYS.acmeAdmin)}/destinations`)
          .set(...bearer(ADMIN_KEYS.acmeAdmin))
          .send({ name, kind: 'webhook', url })
          .expect(201)
      ).body as { data: DestinationBody }
    ).data;
  /** acme's `_audit` entries of one action, read through the API. */
  const audited = async (action: string) =>
    (
      (
        await t
          .http()
          .get('/v1/events')
          .query({ q: `chain:_audit action:${action}`, limit: 100 })
          .set(...bearer(KEYS.acme))
          .expect(200)
      ).body as { data: { resource: string | null }[] }
    ).data;
  /** A datetime-local value of the browser's own time zone, `minutes` ago. */
  /** A time field's value `minutes` ago in UTC, the console's zone by default. */
  const utcField = (minutes: number) =>
    page.evaluate((m) => {
      const d = new Date(Date.now() - m * 60_000);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
    }, minutes);

  beforeAll(async () => {
    buildConsole();
    // A receiver on this machine that acknowledges every delivery.
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    // STREAM_ALLOW_PRIVATE_NETWORKS=true, as AppConfig reads it: an http://127.0.0.1 URL is accepted.
    // No delivery: the states a test sets in the database stay as it set them.
    t = await startTestApp({
      bootstrapKeys: adminBootstrapKeys(),
      streamAllowPrivateNetworks: true,
      streamDelivery: false,
    });
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    chromium = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
    await new Promise((resolve) => receiver?.close(resolve));
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

  it('an admin creates a webhook, copies its secret once, pauses, resumes, replays, rotates and deletes it', async () => {
    await signIn(ADMIN_KEYS.acmeAdmin);
    await expect(nav().getByRole('link', { name: 'Streams' }).count()).resolves.toBe(1);
    await page.getByRole('heading', { name: 'Streams', exact: true }).waitFor();
    await page.getByLabel('Name').fill('siem-hook');
    await page.getByLabel('Kind').selectOption('webhook');
    await page.getByLabel('URL').fill(`${receiverUrl}/hook`);
    await page.getByRole('button', { name: 'Create destination' }).click();

    const secret = (await page.locator('.secret code').textContent())!;
    expect(secret).toMatch(SECRET);
    await expect(page.locator('.secret').textContent()).resolves.toContain('you will not see it again');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(secret);
    await expect(stateOf('siem-hook').textContent()).resolves.toMatch(/active$/);
    await expect(row('siem-hook').textContent()).resolves.toContain(new URL(receiverUrl).host);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'streams.png'), fullPage: true });

    // Shown once: after a reload the destination is listed, its secret is nowhere.
    await page.reload();
    await row('siem-hook').waitFor();
    await expect(page.locator('main').textContent()).resolves.not.toContain(secret);
    await expect(page.locator('.secret').count()).resolves.toBe(0);

    await row('siem-hook').getByRole('button', { name: 'Pause siem-hook' }).click();
    await page.getByText('siem-hook paused.').waitFor();
    await expect(stateOf('siem-hook').textContent()).resolves.toMatch(/paused$/);
    await expect(destinations(ADMIN_KEYS.acmeAdmin)).resolves.toEqual([
      expect.objectContaining({ name: 'siem-hook', state: 'paused' }),
    ]);
    // The same button, now Resume, keeps the keyboard's focus.
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Resume');
    await page.keyboard.press('Enter');
    await page.getByText('siem-hook resumed.').waitFor();
    await expect(stateOf('siem-hook').textContent()).resolves.toMatch(/active$/);

    // Edit: the fields as they are, and only what changed is sent (PATCH); the row shows the new target whole.
    await row('siem-hook').getByRole('button', { name: 'Edit siem-hook…' }).click();
    const edit = page.getByRole('region', { name: 'Edit siem-hook' });
    await expect(edit.getByLabel('URL').inputValue()).resolves.toBe(`${receiverUrl}/hook`);
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('edit-name');
    await edit.getByLabel('URL').fill(`${receiverUrl}/audit/v2`);
    await edit.getByLabel('Only events matching (empty: all)').fill('-action:doc.read');
    await edit.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('siem-hook saved.').waitFor();
    await expect(destinations(ADMIN_KEYS.acmeAdmin)).resolves.toEqual([
      expect.objectContaining({
        name: 'siem-hook',
        url: `${receiverUrl}/audit/v2`,
        q: '-action:doc.read',
        batchSize: 100,
      }),
    ]);
    await expect(row('siem-hook').locator('td[data-label="Sends to"]').textContent()).resolves.toBe(
      `webhook (native) at ${receiverUrl}/audit/v2`,
    );

    // Replay asks for a time in the page, then sends it.
    await row('siem-hook').getByRole('button', { name: 'Replay siem-hook…' }).click();
    await page.getByRole('region', { name: 'Replay siem-hook' }).waitFor();
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('replay-from');
    await page.getByLabel('From (UTC)', { exact: true }).fill(await utcField(60));
    await page.getByRole('button', { name: 'Replay from this time' }).click();
    await page.getByText(/^siem-hook delivers again every event since /).waitFor();
    await expect(page.getByRole('region', { name: 'Replay siem-hook' }).count()).resolves.toBe(0);
    await expect(audited('destination.replayed')).resolves.toHaveLength(1);

    // A new secret, shown once again.
    await row('siem-hook').getByRole('button', { name: 'Rotate secret of siem-hook' }).click();
    await page.getByText('The secret of siem-hook was rotated.').waitFor();
    const rotated = (await page.locator('.secret code').textContent())!;
    expect(rotated).toMatch(SECRET);
    expect(rotated).not.toBe(secret);
    await expect(page.locator('.secret').textContent()).resolves.toContain('The new signing secret of siem-hook');

    // Delete asks first; Cancel keeps it.
    await row('siem-hook').getByRole('button', { name: 'Delete siem-hook…' }).click();
    await page
      .getByRole('region', { name: 'Delete destination ‘siem-hook’?' })
      .getByRole('button', { name: 'Cancel' })
      .click();
    await expect(destinations(ADMIN_KEYS.acmeAdmin)).resolves.toHaveLength(1);
    await row('siem-hook').getByRole('button', { name: 'Delete siem-hook…' }).click();
    await page.getByRole('button', { name: 'Yes, delete siem-hook' }).click();
    await page.getByText('siem-hook deleted.').waitFor();
    await row('siem-hook').waitFor({ state: 'detached' });
    await expect(page.locator('.secret').count()).resolves.toBe(0);
    await expect(destinations(ADMIN_KEYS.acmeAdmin)).resolves.toEqual([]);
    await expect(page.locator('main').textContent()).resolves.not.toContain(rotated);
  });

  it('says in words what the service refused, and keeps what was typed', async () => {
    await signIn(ADMIN_KEYS.acmeAdmin);
    await page.getByLabel('Name').fill('broken');
    await page.getByLabel('URL').fill('not a url');
    await page.getByRole('button', { name: 'Create destination' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toMatch(/url/i);
    await expect(page.getByLabel('URL').inputValue()).resolves.toBe('not a url');
    await expect(page.getByLabel('Name').inputValue()).resolves.toBe('broken');
    await expect(destinations(ADMIN_KEYS.acmeAdmin).then((d) => d.map((x) => x.name))).resolves.not.toContain('broken');
  });

  it('shows each state in words with a mark, and a receiver’s error as text, never HTML', async () => {
    const injected = '<img src=x onerror="window.__streamsXss=1"><b>bold</b>';
    const paused = await createByApi('orders-to-siem-eu-west-1-primary', `${receiverUrl}/paused`);
    const gone = await createByApi('gone', `${receiverUrl}/gone`);
    // Port 1 answers nothing: should a delivery engine run, this one stays retrying.
    const flaky = await createByApi('flaky', 'http://127.0.0.1:1/');
    const at = '2026-11-28T01:00:00.000Z';
    await t.dataSource.query(
      `UPDATE destinations SET state = 'paused', consecutive_failures = 4, last_error = $2 WHERE id = $1`,
      [paused.id, { at, status: 503, message: injected }],
    );
    await t.dataSource.query(`UPDATE destinations SET state = 'disabled', last_error = $2 WHERE id = $1`, [
      gone.id,
      { at, status: 410, message: 'Gone' },
    ]);
    await t.dataSource.query(
      `UPDATE destinations SET state = 'retrying', consecutive_failures = 2, delivered_events = 42,
         last_delivered_at = now() - interval '3 hours', last_delivered_event_at = now() - interval '3 hours 5 minutes'
       WHERE id = $1`,
      [flaky.id],
    );
    await signIn(ADMIN_KEYS.acmeAdmin);
    const cell = (name: string, header: string) => row(name).locator(`td[data-label="${header}"]`);
    await row('gone').waitFor();
    await expect(stateOf('orders-to-siem-eu-west-1-primary').textContent()).resolves.toBe('‖ paused');
    await expect(stateOf('gone').textContent()).resolves.toBe('✕ disabled (the receiver answered 410 Gone)');
    // Its health in words: failing now, how often, the last error's age and text (isolated, U+2068…U+2069:
    // its direction marks cannot turn the sentence around it).
    const days = Math.floor((Date.now() - Date.parse(at)) / 86_400_000);
    await expect(row('orders-to-siem-eu-west-1-primary').locator('.health').textContent()).resolves.toBe(
      `Failing: 4 attempts in a row, the last ${days} days ago: HTTP 503: \u2068${injected}\u2069`,
    );
    await expect(row('gone').locator('.health').textContent()).resolves.toBe(
      `The last error was ${days} days ago (HTTP 410: \u2068Gone\u2069); nothing delivered since, 0 failing.`,
    );
    await expect(cell('gone', 'Lag').textContent()).resolves.toBe('nothing delivered yet');
    await expect(cell('gone', 'Delivered').textContent()).resolves.toBe('nothing yet');
    await expect(stateOf('flaky').textContent()).resolves.toBe('↻ retrying (the last attempt failed)');
    await expect(cell('flaky', 'Lag').textContent()).resolves.toBe('3 h');
    await expect(cell('flaky', 'Delivered').textContent()).resolves.toMatch(/^42 events, the last at \d{4}-/);
    await expect(cell('flaky', 'Sends to').textContent()).resolves.toBe('webhook (native) at http://127.0.0.1:1');
    await row('flaky').getByRole('button', { name: 'Pause flaky' }).waitFor();
    await expect(page.locator('main img, main b').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (window as unknown as { __streamsXss?: number }).__streamsXss)).resolves.toBe(
      undefined,
    );
    // Both wait for a person: each offers Resume, not Pause.
    await row('gone').getByRole('button', { name: 'Resume gone' }).waitFor();
    await expect(row('gone').getByRole('button', { name: 'Pause gone' }).count()).resolves.toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);

    for (const width of [360, 768]) {
      await page.setViewportSize({ width, height: 740 });
      await page.screenshot({ path: join(SCREENSHOTS, `${width}-streams.png`), fullPage: true });
      const { scroll, client } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
      }));
      expect(scroll).toBeLessThanOrEqual(client);
      await expect(crampedTexts(page, 'tbody td')).resolves.toEqual([]);
      expect(await seriousAxeViolations(page)).toEqual([]);
    }
  });

  it("an operator opens another account's streams from Accounts; the formats follow the kind", async () => {
    await signIn(ADMIN_KEYS.operator, '/console/accounts');
    await page.getByRole('link', { name: 'Streams of globex' }).click();
    await page.getByRole('heading', { name: /^Streams of acc_/ }).waitFor();
    const formats = () => page.getByLabel('Format').locator('option').allTextContents();
    await expect(formats()).resolves.toEqual(['native', 'ocsf']);
    await page.getByLabel('Kind').selectOption('syslog');
    await expect(formats()).resolves.toEqual(['native', 'ocsf', 'cef']);
    await page.getByLabel('Format').selectOption('cef');
    await page.getByLabel('Name').fill('globex-syslog');
    await page.getByLabel('URL').fill('syslog://127.0.0.1:6514');
    await page.getByRole('button', { name: 'Create destination' }).click();
    await page.getByText('Destination globex-syslog created.').waitFor();
    // No secret for a syslog destination.
    await expect(page.locator('.secret').count()).resolves.toBe(0);
    await expect(row('globex-syslog').textContent()).resolves.toContain('syslog (cef)');
    await expect(destinations(ADMIN_KEYS.globexAdmin)).resolves.toEqual([
      expect.objectContaining({ name: 'globex-syslog' }),
    ]);
    await expect(destinations(ADMIN_KEYS.acmeAdmin).then((d) => d.map((x) => x.name))).resolves.not.toContain(
      'globex-syslog',
    );
  });

  it('a read key has no Streams entry, and the page says in words that it may not', async () => {
    await signIn(KEYS.acmeReadOnly, '/console/events');
    await nav().getByRole('link', { name: 'Events' }).waitFor();
    await expect(nav().getByRole('link', { name: 'Streams' }).count()).resolves.toBe(0);
    await page.goto(`${origin}/console/streams`);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('This key may not do that.');
  });
});
