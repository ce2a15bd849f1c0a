/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser: they are typed against the DOM.
import { mkdirSync, readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { attemptSql } from './support/raw-sql';
import { crampedTexts, launchChromium, midWordBreaks, seriousAxeViolations } from './support/browser';
import { buildConsole } from './support/console-build';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * The console (docs/contract.md §15) in a real browser: Debian's Chromium driven by playwright-core,
 * against the real app on a real database (PostgreSQL, or the embedded default with
 * E2E_EMBEDDED=1). Screenshots of each page go to dist/console-screenshots.
 */
const SCREENSHOTS = join(__dirname, '..', 'dist', 'console-screenshots');
const XSS_ACTOR = '<img src=x onerror="window.__pwned=1">';
const XSS_CONTEXT = { note: '<script>window.__pwned=2</script>', html: '<b onmouseover="window.__pwned=3">x</b>' };
/** Values as long as real ones get: service actors, dotted actions, deep resource paths, long chain names. */
const LONG_EVENT = {
  actor: 'svc-payments-reconciler@billing.acme-corp.example',
  action: 'invoice.payment.reconciled',
  resource: 'invoices/2026/INV-000123-eu-west-1/line-items',
  chain: 'billing-eu-west-1-reconciliation',
};

interface ApiEvent {
  id: string;
  chain: { id: string; name: string; position: number };
}

/** Polls until `read` gives `expected` (or fails with the last value after 5 s). */
async function until<T>(read: () => Promise<T>, expected: T): Promise<void> {
  let value = await read();
  for (const deadline = Date.now() + 5_000; value !== expected && Date.now() < deadline; value = await read())
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(value).toBe(expected);
}

describe('the console in Chromium', () => {
  let t: TestApp;
  let origin: string;
  let chromium: { browser: Browser; close: () => Promise<void> };
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  const append = async (body: Record<string, unknown>, key: string = KEYS.acme): Promise<ApiEvent> =>
    (
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(key))
        .send(body)
        .expect(201)
    ).body.data as ApiEvent;

  const open = async (path: string) => {
    await page.goto(origin + path);
  };
  const signIn = async (key: string = KEYS.acme) => {
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };
  const rows = () => page.locator('table tbody tr');
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const expectAccessible = async (name: string) => {
    expect({ page: name, violations: await seriousAxeViolations(page) }).toEqual({ page: name, violations: [] });
  };
  const expectNoHorizontalScroll = async () => {
    const { scroll, client } = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth,
      client: document.documentElement.clientWidth,
    }));
    expect(scroll).toBeLessThanOrEqual(client);
  };

  let events: ApiEvent[];
  let xss: ApiEvent;
  let tampered: ApiEvent;

  beforeAll(async () => {
    buildConsole();
    mkdirSync(SCREENSHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    events = [];
    for (let i = 0; i < 60; i++)
      events.push(
        await append({
          actor: i % 3 === 0 ? 'alice' : 'bob',
          action: i % 2 === 0 ? 'order.created' : 'user.login',
          resource: `order/${i}`,
          context: { i, amount: i * 1.5 },
          chain: i % 4 === 0 ? 'payments' : 'default',
        }),
      );
    xss = await append({
      actor: XSS_ACTOR,
      action: 'xss.try',
      resource: '<svg onload=alert(1)>',
      context: XSS_CONTEXT,
    });
    tampered = await append({ actor: 'carol', action: 'doc.signed', resource: 'doc/7', chain: 'contracts' });
    await append({ actor: 'carol', action: 'doc.filed', resource: 'doc/7', chain: 'contracts' });
    chromium = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  beforeEach(async () => {
    context = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/Failed to load resource/.test(message.text()))
        problems.push(`console error: ${message.text()}`);
    });
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
  });

  afterEach(async () => {
    await context.close();
    // No CSP violation, script error or alert on any page of any test.
    expect(problems).toEqual([]);
  });

  it('signs in by keyboard with a pasted key, shows the newest 50 events, pages with Load more', async () => {
    await open('/console');
    await expectAccessible('sign-in');
    await shot('sign-in');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('api-key');
    await page.keyboard.type(KEYS.acme);
    const started = Date.now();
    await page.keyboard.press('Enter');
    await rows().nth(49).waitFor();
    const firstPageMs = Date.now() - started;
    console.log(`console: first 50 events shown ${firstPageMs} ms after Sign in`);
    expect(page.url()).toBe(`${origin}/console/events`);
    await expect(rows().count()).resolves.toBe(50);
    // Newest first: the last appended event heads the table.
    await expect(rows().first().textContent()).resolves.toContain('doc.filed');
    await page.getByRole('button', { name: 'Load more' }).click();
    await rows().nth(50).waitFor();
    await expect(rows().count()).resolves.toBe(63);
    await expect(page.getByRole('button', { name: 'Load more' }).count()).resolves.toBe(0);
    // Without GET /v1/me (not on this service yet) the key's scopes are unknown: the read pages only.
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const name of ['Events', 'Chains', 'Statistics', 'Live'])
      await expect(nav.getByRole('link', { name }).count()).resolves.toBe(1);
    for (const name of ['Keys', 'Accounts']) await expect(nav.getByRole('link', { name }).count()).resolves.toBe(0);
    await expectAccessible('events');
    await shot('events');
  });

  it('works by keyboard alone: skip link, navigation, a row opened with Enter, the export menu', async () => {
    await open('/console/events');
    await signIn();
    await rows().first().waitFor();
    const focused = () =>
      page.evaluate(() => {
        const e = document.activeElement;
        return { tag: e?.tagName ?? '', text: e?.textContent ?? '', inBody: !!e?.closest('tbody') };
      });
    await page.keyboard.press('Tab');
    await expect(focused()).resolves.toMatchObject({ tag: 'A', text: 'Skip to content' });
    await page.keyboard.press('Tab');
    await expect(focused()).resolves.toMatchObject({ tag: 'A', text: 'Events' });
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(`${origin}/console/chains`);
    await page.goBack();
    await rows().first().waitFor();
    // Tab on to the first row's link and open it with Enter.
    await page.locator('body').focus();
    for (let i = 0; i < 40 && !(await focused()).inBody; i++) await page.keyboard.press('Tab');
    expect((await focused()).inBody).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/events\/evt_/);
    await page.getByText('Verified in your browser').waitFor();
    // The export menu opens from the keyboard too.
    await page.goBack();
    await page.getByText('Export').focus();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('button', { name: 'CSV' }).isVisible()).resolves.toBe(true);
  });

  it('keeps the key in sessionStorage only, never in a URL, localStorage or a cookie; Sign out forgets it', async () => {
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    await open('/console/events');
    await signIn();
    await rows().first().waitFor();
    await page.getByRole('link', { name: 'Chains' }).click();
    await page.getByRole('heading', { name: 'Chains' }).waitFor();
    const storage = await page.evaluate(() => ({
      session: Object.entries(sessionStorage),
      local: Object.entries(localStorage),
      cookie: document.cookie,
      url: location.href,
    }));
    expect(storage.session).toEqual([['audit-console-key', KEYS.acme]]);
    expect(storage.local).toEqual([]);
    expect(storage.cookie).toBe('');
    expect(await context.cookies()).toEqual([]);
    expect(requested.length).toBeGreaterThan(3);
    for (const url of [...requested, storage.url]) expect(url).not.toContain(KEYS.acme);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    await expect(page.evaluate(() => sessionStorage.length)).resolves.toBe(0);
  });

  it('refuses a wrong key in words', async () => {
    await open('/console');
    await page.getByLabel('API key').fill('not-a-key-of-this-service-000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    // On the sign-in page, where there is no Sign out, it says what to do there.
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'That key was refused (unknown, revoked or expired). Check it and paste it again.',
    );
    await expect(page.getByLabel('API key').count()).resolves.toBe(1);
  });

  it('searches with q, and the search survives a reload', async () => {
    await open('/console/events');
    await signIn();
    await page.getByLabel('Search').fill('actor:alice action:order.*');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/q=actor%3Aalice/);
    // i % 3 === 0 and i % 2 === 0: i = 0, 6, …, 54 → 10 events.
    await until(() => rows().count(), 10);
    for (const text of await rows().allTextContents()) expect(text).toMatch(/order\.created.*alice/);
    await page.reload();
    await until(() => rows().count(), 10);
    await expect(page.getByLabel('Search').inputValue()).resolves.toBe('actor:alice action:order.*');
    // A malformed q is the API's error, in words.
    await page.getByLabel('Search').fill('actor:"open');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      'q needs a closing " for the value quoted at offset 6 (at offset 11)',
    );
  });

  it('exports the current filters through fetch (the key in a header, a blob for the browser)', async () => {
    await open('/console/events?q=actor%3Aalice');
    await signIn();
    await page.getByText('Export').click();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'JSON' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^audit-export-\d{8}T\d{6}Z-\d{8}T\d{6}Z\.json$/);
    const path = await download.path();
    const body = JSON.parse(readFileSync(path, 'utf8')) as { data: { actor: string }[] };
    expect(body.data).toHaveLength(20);
    expect(body.data.every((e) => e.actor === 'alice')).toBe(true);
  });

  it('opens an event from its row and verifies it in the browser; the page survives a reload', async () => {
    await open('/console/events');
    await signIn();
    const target = events[57]!;
    await page.goto(`${origin}/console/events?q=resource%3Aorder%2F57`);
    await until(() => rows().count(), 1);
    await rows().first().click();
    await page.waitForURL(`${origin}/console/events/${target.id}`);
    await page.getByText('Verified in your browser').waitFor();
    await expect(page.getByText('Valid: the hash and the link to the previous event hold.').count()).resolves.toBe(1);
    await page.reload();
    await page.getByText('Verified in your browser').waitFor();
    await expect(page.locator('dd').filter({ hasText: target.id }).count()).resolves.toBeGreaterThan(0);
    await expectAccessible('event');
    await shot('event');
  });

  it('shows an event whose fields hold HTML and script as text, running nothing', async () => {
    await open(`/console/events/${xss.id}`);
    await signIn();
    await page.getByText('Verified in your browser').waitFor();
    await expect(page.getByText(XSS_ACTOR, { exact: true }).count()).resolves.toBe(1);
    await expect(page.locator('pre').filter({ hasText: XSS_CONTEXT.note }).count()).resolves.toBe(1);
    await open('/console/events');
    await rows().first().waitFor();
    await expect(page.getByRole('cell', { name: XSS_ACTOR }).count()).resolves.toBe(1);
    await page.locator('td', { hasText: XSS_CONTEXT.html }).count();
    await expect(page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).resolves.toBeUndefined();
    await expect(page.locator('img[src="x"], svg[onload], script:not([src])').count()).resolves.toBe(0);
  });

  it('says Not verified, naming the hash, for an event whose stored row was altered', async () => {
    const error = await attemptSql(t.dataSource, async (sql) => {
      await sql.query('SET LOCAL session_replication_role = replica');
      await sql.query(`UPDATE events SET actor = 'mallory' WHERE id = audit_ulid_uuid($1)`, [tampered.id]);
    });
    expect(error).toBeNull();
    await open(`/console/events/${tampered.id}`);
    await signIn();
    await page.getByText('Not verified', { exact: true }).waitFor();
    const text = await page.locator('main').textContent();
    // The fields no longer give the stored hash; that hash is still the signed tree's leaf.
    expect(text).toContain('What failed: the hash.');
    expect(text).toContain('Holds The event is leaf 0 of the signed tree');
    expect(text).toContain('The hash does not match');
    expect(text).not.toContain('Verified in your browser');
    await expect(page.getByText('Not valid.').count()).resolves.toBe(1);
    await shot('event-tampered');
  });

  it('verifies a chain with Verify and shows its latest checkpoint', async () => {
    await open('/console/chains');
    await signIn();
    await page.getByRole('button', { name: 'Verify payments' }).click();
    await page.getByText(/^Verified: 15 events/).waitFor();
    await page.getByRole('button', { name: 'Latest checkpoint of payments' }).click();
    await page.getByText(/^audit-trail\/chn_/).waitFor();
    await page.getByRole('button', { name: 'Verify contracts' }).click();
    await page.getByText(/^Not valid: /).waitFor();
    await expectAccessible('chains');
    await shot('chains');
  });

  it('charts events per day as bars, one tick a day over the last 7 days, and the top actions, actors and resources', async () => {
    await open('/console/statistics');
    await signIn();
    // 63 appended here, and the `_audit` chain's record of each export made before (docs/contract.md §12).
    await page.getByRole('heading', { name: /Events per day \(6[3-9] in all\)/ }).waitFor();
    // "7 days" is 7 bars (UTC days, today's included), one tick each, all of today's events in the last.
    await expect(page.locator('.chart rect.bar-rect').count()).resolves.toBe(7);
    await expect(page.locator('.chart line.tick').count()).resolves.toBe(7);
    const today = new Date().toISOString().slice(0, 10);
    const last = await page.locator('.chart rect.bar-rect title').last().textContent();
    expect(last).toMatch(new RegExp(`^${today}: 6[3-9]$`));
    await expect(page.locator('figcaption').textContent()).resolves.toContain('7 days (UTC days); the busiest is');
    await expect(page.getByLabel('From (UTC)').inputValue()).resolves.toMatch(/T00:00$/);
    const actions = page.getByRole('region', { name: 'Top actions' });
    await expect(actions.getByRole('listitem').first().textContent()).resolves.toMatch(/^order\.created.*30$/);
    await expect(
      page.getByRole('region', { name: 'Top actors' }).getByRole('listitem').first().textContent(),
    ).resolves.toMatch(/^bob.*40$/);
    await page.getByLabel('Per', { exact: true }).selectOption('hour');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('heading', { name: /Events per hour/ }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: /Events per hour/ }).waitFor();
    // Every bucket has its tick; the labels are as many as fit.
    const bars = await page.locator('.chart rect.bar-rect').count();
    await expect(page.locator('.chart line.tick').count()).resolves.toBe(bars);
    await expectAccessible('statistics');
    await shot('statistics');
  });

  it('shows a new event on Live within 2 s, filtered by the search', async () => {
    await open('/console/live?q=action%3Alive.*');
    await signIn();
    await page.getByText('Connected: new events appear here as they are appended.').waitFor();
    await append({ actor: 'dave', action: 'other.thing' });
    const appendedAt = Date.now();
    await append({ actor: 'dave', action: 'live.ping', context: { note: '<i>text</i>' } });
    await rows().first().waitFor({ timeout: 2_000 });
    console.log(`console: a new event shown on Live ${Date.now() - appendedAt} ms after its append answered`);
    await expect(rows().count()).resolves.toBe(1);
    await expect(rows().first().textContent()).resolves.toContain('live.ping');
    await expectAccessible('live');
    await shot('live');
  });

  it('shows one card per event at 360 px: long values at a readable width, a bounded page, still a table for screen readers', async () => {
    // Another account's events, so that the counts the other tests see stay as they are.
    for (let i = 0; i < 50; i++) await append({ ...LONG_EVENT, resource: `${LONG_EVENT.resource}/${i}` }, KEYS.globex);
    await page.setViewportSize({ width: 360, height: 740 });
    await open('/console/events');
    await signIn(KEYS.globex);
    await rows().nth(49).waitFor();
    await expectNoHorizontalScroll();
    const height = (await page.locator('table').boundingBox())!.height;
    console.log(`console: 50 events with long values at 360 px take ${height} px`);
    await shot('360-events-long');
    expect(height).toBeLessThan(50 * 200);
    await expect(crampedTexts(page, 'tbody td')).resolves.toEqual([]);
    await expect(midWordBreaks(page, 'tbody td')).resolves.toEqual([]);
    // What Chromium gives screen readers: the same table, its headers, and cells without the visible labels.
    const cdp = await context.newCDPSession(page);
    const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
      nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[];
    };
    const named = (role: string) => nodes.filter((n) => !n.ignored && n.role?.value === role).map((n) => n.name?.value);
    expect(named('table')).toHaveLength(1);
    expect(named('columnheader')).toEqual(['Time (UTC)', 'Action', 'Actor', 'Resource', 'Chain']);
    expect(named('row')).toHaveLength(51);
    expect(named('cell').filter((name) => name === LONG_EVENT.actor)).toHaveLength(50);
    await expectAccessible('events at 360 px');
    // Two cards a row at 768 px, the table at 1280 px: nothing squeezed either.
    for (const width of [768, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await shot(`${width}-events-long`);
      await expectNoHorizontalScroll();
      await expect(crampedTexts(page, 'tbody td')).resolves.toEqual([]);
      // Identifiers wrap between their parts ("invoice.payment.|reconciled"), never inside a word.
      await expect(midWordBreaks(page, 'tbody td')).resolves.toEqual([]);
    }
  });

  it('shows every read page at 1280 and 360 px in Los Angeles and in UTC, the same instants in UTC until switched to local', async () => {
    const pages = [
      ['events', '/console/events', 'table tbody tr'],
      ['event', `/console/events/${events[3]!.id}`, 'text=Verified in your browser'],
      ['chains', '/console/chains', 'text=Verify'],
      ['statistics', '/console/statistics', '.chart svg'],
      ['live', '/console/live', 'text=Connected: new events appear here as they are appended.'],
    ] as const;
    /** What a person sees first (the viewport: the full pages are the other tests' screenshots). */
    const view = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
    /** What each zone's browser shows: the first row's time and the statistics' range, as text. */
    const seen: Record<string, { firstTime: string; from: string; header: string }> = {};
    for (const timezoneId of ['America/Los_Angeles', 'UTC']) {
      const zoned = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId });
      page = await zoned.newPage();
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      await open('/console');
      await expectNoHorizontalScroll();
      await signIn();
      const tz = timezoneId === 'UTC' ? 'utc' : 'la';
      for (const [name, path, ready] of pages) {
        await page.setViewportSize({ width: 1280, height: 900 });
        await open(path);
        await page.locator(ready).first().waitFor();
        await expectNoHorizontalScroll();
        await view(`${tz}-1280-${name}`);
        if (name === 'events')
          seen[tz] = {
            firstTime: (await rows().first().locator('td').first().textContent())!,
            header: (await page.locator('thead th').first().textContent())!,
            from: '',
          };
        if (name === 'statistics') seen[tz]!.from = await page.getByLabel('From (UTC)').inputValue();
        await page.setViewportSize({ width: 360, height: 740 });
        await expectNoHorizontalScroll();
        await view(`${tz}-360-${name}`);
        // The zone changes text, not layout: axe once per page.
        if (tz === 'utc') await expectAccessible(`${name} at 360 px`);
      }
      if (tz === 'la') {
        // Switched to local: the same instant, in the browser's zone, and every label says so.
        await page.setViewportSize({ width: 1280, height: 900 });
        await open('/console/events');
        await rows().first().waitFor();
        const instant = await rows().first().locator('time').getAttribute('datetime');
        await page.getByLabel('Times in').selectOption('local');
        await expect(page.locator('thead th').first().textContent()).resolves.toBe('Time (local, America/Los_Angeles)');
        const local = (await rows().first().locator('time').textContent())!;
        expect(local).toMatch(/ P[SD]T$/);
        const expected = new Date(instant!).toLocaleString('sv-SE', { timeZone: 'America/Los_Angeles' });
        expect(local.startsWith(expected)).toBe(true);
        await expect(page.getByLabel('After (local, America/Los_Angeles)').count()).resolves.toBe(1);
        await view('la-1280-events-local');
        // The switch is remembered in this browser, and switched back for the other tests.
        await page.reload();
        await expect(page.locator('thead th').first().textContent()).resolves.toBe('Time (local, America/Los_Angeles)');
        await page.getByLabel('Times in').selectOption('utc');
      }
      await zoned.close();
    }
    // The same instants, in UTC, whatever the browser's zone.
    expect(seen.la).toEqual(seen.utc);
    expect(seen.utc!.header).toBe('Time (UTC)');
    expect(seen.utc!.firstTime).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(seen.utc!.from).toMatch(/T00:00$/);
  });
});
