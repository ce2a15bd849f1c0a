/// <reference lib="dom" />
// Functions passed to page.evaluate run in the browser: they are typed against the DOM.
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { crampedTexts, launchChromium, seriousAxeViolations } from './support/browser';
import { buildConsole } from './support/console-build';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * The console's Keys and Accounts pages (docs/contract.md §12, §15) in Chromium, with the keys of an admin
 * and of an operator: what GET /v1/me says decides the navigation; a key's secret is shown once
 * with a Copy button; a revoked key stops working. And the Chains page's retention and legal hold
 * (§14): set by an admin key, recorded in `_audit`, shown without controls to a read-only key.
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
    // Its state says so in words, not only through the buttons beside it.
    await expect(row.getByRole('cell').last().textContent()).resolves.toMatch(/^active/);

    await row.getByRole('button', { name: /^Revoke/ }).click();
    await page.getByRole('button', { name: 'Yes, revoke console-reader' }).click();
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

  it('shows Keys and Accounts as one card per row at 360 and 768 px, nothing squeezed', async () => {
    const fits = async (name: string) => {
      for (const width of [360, 768]) {
        await page.setViewportSize({ width, height: 740 });
        await page.screenshot({ path: join(SCREENSHOTS, `${width}-${name}.png`), fullPage: true });
        const { scroll, client } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          client: document.documentElement.clientWidth,
        }));
        expect(scroll).toBeLessThanOrEqual(client);
        await expect(crampedTexts(page, 'tbody td')).resolves.toEqual([]);
        expect(await seriousAxeViolations(page)).toEqual([]);
      }
    };
    await page.setViewportSize({ width: 360, height: 740 });
    await signIn(ADMIN_KEYS.acmeAdmin);
    await page.getByLabel('Name').fill('billing-eu-west-1-reconciliation-worker');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('row').filter({ hasText: 'billing-eu-west-1-reconciliation-worker' }).waitFor();
    await fits('keys');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(ADMIN_KEYS.operator, '/console/accounts');
    await page.getByRole('row').filter({ hasText: 'globex' }).waitFor();
    await fits('accounts');
  });

  it('says in words when a key may not read the events', async () => {
    await signIn(ADMIN_KEYS.acmeAdmin, '/console/events');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('This key may not do that.');
  });

  describe('retention and legal hold on Chains', () => {
    let adminReader: string;
    let adminReaderId: string;
    const chain = () => page.getByRole('region', { name: 'orders', exact: true });
    /** The value shown for a term of the chain's status. */
    const field = (term: string) =>
      chain()
        .locator('.fields > div')
        .filter({ has: page.locator('dt').getByText(term, { exact: true }) })
        .locator('dd');
    /** acme's `_audit` entries of one action, oldest first, read through the API. */
    const audited = async (action: string) =>
      (
        (
          await t
            .http()
            .get('/v1/events')
            .query({ q: `chain:_audit action:${action}`, limit: 100 })
            .set(...bearer(KEYS.acme))
            .expect(200)
        ).body as { data: { actor: string; resource: string | null; context: unknown }[] }
      ).data.reverse();

    const acmeId = async () =>
      (
        (
          await t
            .http()
            .get('/v1/me')
            .set(...bearer(ADMIN_KEYS.acmeAdmin))
            .expect(200)
        ).body as {
          data: { accountId: string };
        }
      ).data.accountId;

    beforeAll(async () => {
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: 'alice', action: 'order.created', resource: 'order/1', chain: 'orders' })
        .expect(201);
      // The Chains page lists chains (scope read) and changes them (admin): a key with both.
      const created = await t
        .http()
        .post(`/v1/accounts/${await acmeId()}/keys`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .send({ name: 'console-retention', scopes: ['read', 'admin'] })
        .expect(201);
      ({ secret: adminReader, id: adminReaderId } = (created.body as { data: { secret: string; id: string } }).data);
    });

    it("an admin sets a chain's retention, places and lifts a legal hold; _audit records each change", async () => {
      await signIn(adminReader, '/console/chains');
      await chain().waitFor();
      await expect(field('First retained position').textContent()).resolves.toBe('1');
      await expect(field('Retention').textContent()).resolves.toBe('forever (follows the account)');
      await expect(field('Legal hold').textContent()).resolves.toBe('None');

      await chain().getByLabel('Retention days for orders').fill('30');
      await chain().getByRole('button', { name: 'Save retention' }).click();
      await chain().getByText('Retention of orders saved: 30 days (its own setting).').waitFor();
      await expect(field('Retention').textContent()).resolves.toBe('30 days (its own setting)');

      // A hold needs a reason: said in words, nothing sent.
      await chain().getByLabel('Legal hold reason for orders').fill('   ');
      await chain().getByRole('button', { name: 'Place legal hold' }).click();
      await expect(chain().getByRole('alert').textContent()).resolves.toBe(
        'A reason is required to place a legal hold.',
      );
      await chain().getByLabel('Legal hold reason for orders').fill('litigation 2026-117');
      await chain().getByRole('button', { name: 'Place legal hold' }).click();
      await chain().getByText('Legal hold placed on orders.').waitFor();
      await expect(chain().getByRole('alert').count()).resolves.toBe(0);

      // What the service stored, after a reload.
      await page.reload();
      await chain().waitFor();
      await expect(field('Retention').textContent()).resolves.toBe('30 days (its own setting)');
      await expect(field('Legal hold').textContent()).resolves.toBe('On hold (its own hold): nothing is pruned');
      await expect(chain().getByLabel('Retention days for orders').inputValue()).resolves.toBe('30');
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.screenshot({ path: join(SCREENSHOTS, 'chains-retention.png'), fullPage: true });
      // The controls fit 360 px without horizontal scrolling.
      await page.setViewportSize({ width: 360, height: 740 });
      const { scroll, client } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
      }));
      expect(scroll).toBeLessThanOrEqual(client);
      await page.screenshot({ path: join(SCREENSHOTS, '360-chains-retention.png'), fullPage: true });

      await chain().getByLabel('Legal hold reason for orders').fill('case closed');
      await chain().getByRole('button', { name: 'Lift legal hold' }).click();
      await chain().getByText('Legal hold on orders lifted.').waitFor();
      // Cleared: the chain follows the account again.
      await chain().getByLabel('Retention days for orders').fill('');
      await chain().getByRole('button', { name: 'Save retention' }).click();
      await chain().getByText('Retention of orders saved: forever (follows the account).').waitFor();

      await page.reload();
      await chain().waitFor();
      await expect(field('Legal hold').textContent()).resolves.toBe('None');
      await expect(field('Retention').textContent()).resolves.toBe('forever (follows the account)');
      await chain().getByRole('button', { name: 'Place legal hold' }).waitFor();

      const chainId = (await field('Id').textContent())!;
      const actor = `key:${adminReaderId}`;
      await expect(audited('retention.changed')).resolves.toEqual([
        expect.objectContaining({ actor, resource: chainId, context: { days: 30 } }),
        expect.objectContaining({ actor, resource: chainId, context: { days: null } }),
      ]);
      await expect(audited('legal_hold.changed')).resolves.toEqual([
        expect.objectContaining({ actor, resource: chainId, context: { hold: true, reason: 'litigation 2026-117' } }),
        expect.objectContaining({ actor, resource: chainId, context: { hold: false, reason: 'case closed' } }),
      ]);
    });

    it('says in words what the service refused', async () => {
      await signIn(adminReader, '/console/chains');
      await chain().waitFor();
      // The key is revoked behind the page's back: the next change is refused, and said so.
      await t
        .http()
        .delete(`/v1/accounts/${await acmeId()}/keys/${adminReaderId}`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .expect(200);
      const deadline = Date.now() + 6_000;
      while ((await status(adminReader)) !== 401 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      await chain().getByLabel('Retention days for orders').fill('7');
      await chain().getByRole('button', { name: 'Save retention' }).click();
      await expect(chain().getByRole('alert').textContent()).resolves.toContain('The key was refused');
      await expect(audited('retention.changed')).resolves.toHaveLength(2);
    });

    it('a read-only key sees retention and legal hold, and no controls', async () => {
      await signIn(KEYS.acmeReadOnly, '/console/chains');
      await chain().waitFor();
      await expect(field('Retention').textContent()).resolves.toBe('forever (follows the account)');
      await expect(field('Legal hold').textContent()).resolves.toBe('None');
      await expect(field('First retained position').textContent()).resolves.toBe('1');
      await expect(page.getByRole('button', { name: /retention|legal hold/i }).count()).resolves.toBe(0);
      await expect(page.getByRole('textbox').count()).resolves.toBe(0);
      await expect(page.getByRole('spinbutton').count()).resolves.toBe(0);
      expect(await seriousAxeViolations(page)).toEqual([]);
    });

    it("an operator picks acme, reads its events (recorded in acme's _audit) and sets its chain; an admin cannot lift the operator's hold", async () => {
      const ordersId = (
        (
          await t
            .http()
            .get('/v1/chains')
            .query({ name: 'orders' })
            .set(...bearer(KEYS.acme))
            .expect(200)
        ).body as {
          data: { id: string }[];
        }
      ).data[0]!.id;
      const operatorKeyId = (
        (
          await t
            .http()
            .get('/v1/me')
            .set(...bearer(ADMIN_KEYS.operator))
            .expect(200)
        ).body as { data: { keyId: string } }
      ).data.keyId;
      await signIn(ADMIN_KEYS.operator, '/console/events');
      // Its own account (system) first; then acme, chosen in the header, on every page from there on.
      await page.getByLabel('Account').selectOption({ label: 'acme' });
      await page.waitForURL(/\/console\/events\?account=acc_/);
      await page.locator('table tbody tr').filter({ hasText: 'order.created' }).first().waitFor();
      await expect(audited('operator.read')).resolves.toEqual([
        expect.objectContaining({
          actor: `key:${operatorKeyId}`,
          context: expect.objectContaining({ route: expect.any(String) }),
        }),
      ]);
      await nav().getByRole('link', { name: 'Chains' }).click();
      await page.waitForURL(/\/console\/chains\?account=acc_/);
      await chain().waitFor();
      await chain().getByLabel('Retention days for orders').fill('14');
      await chain().getByRole('button', { name: 'Save retention' }).click();
      await chain().getByText('Retention of orders saved: 14 days (its own setting).').waitFor();
      await chain().getByLabel('Legal hold reason for orders').fill('subpoena 7');
      await chain().getByRole('button', { name: 'Place legal hold' }).click();
      await chain().getByText('Legal hold placed on orders.').waitFor();
      await expect(field('Legal hold').textContent()).resolves.toBe(
        'On hold (its own hold, placed by an operator): nothing is pruned',
      );
      expect(await seriousAxeViolations(page)).toEqual([]);
      await page.screenshot({ path: join(SCREENSHOTS, 'chains-operator.png'), fullPage: true });
      await page.getByRole('button', { name: 'Sign out' }).click();

      // acme's admin sees the operator's hold and may not lift it: said in words.
      const created = await t
        .http()
        .post(`/v1/accounts/${await acmeId()}/keys`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .send({ name: 'console-retention-2', scopes: ['read', 'admin'] })
        .expect(201);
      await signIn((created.body as { data: { secret: string } }).data.secret, '/console/chains');
      await chain().waitFor();
      await expect(field('Legal hold').textContent()).resolves.toBe(
        'On hold (its own hold, placed by an operator): nothing is pruned',
      );
      await chain().getByRole('button', { name: 'Lift legal hold' }).click();
      await expect(chain().getByRole('alert').textContent()).resolves.toContain(
        'only an operator key may change or lift it',
      );
      await page.getByRole('button', { name: 'Sign out' }).click();

      // The operator lifts it, without a reason, and the chain follows the account again.
      await signIn(ADMIN_KEYS.operator, `/console/chains?account=${await acmeId()}`);
      await chain().getByRole('button', { name: 'Lift legal hold' }).click();
      await chain().getByText('Legal hold on orders lifted.').waitFor();
      await chain().getByLabel('Retention days for orders').fill('');
      await chain().getByRole('button', { name: 'Save retention' }).click();
      await chain().getByText('Retention of orders saved: forever (follows the account).').waitFor();
      await expect(audited('legal_hold.changed')).resolves.toEqual(
        expect.arrayContaining([
          expect.objectContaining({ resource: ordersId, context: { hold: false, reason: null } }),
        ]),
      );
    });
  });

  it('erases from the console: a dry run counts the events, then a reason and the typed count; the event shows by which erasure', async () => {
    const acme = (
      (
        await t
          .http()
          .get('/v1/me')
          .set(...bearer(ADMIN_KEYS.acmeAdmin))
          .expect(200)
      ).body as { data: { accountId: string } }
    ).data.accountId;
    const made = await t
      .http()
      .post(`/v1/accounts/${acme}/keys`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ name: 'console-erasure', scopes: ['read', 'admin'] })
      .expect(201);
    const key = (made.body as { data: { secret: string } }).data.secret;
    const ids: string[] = [];
    for (const i of [1, 2])
      ids.push(
        (
          (
            await t
              .http()
              .post('/v1/events')
              .set(...bearer(KEYS.acme))
              .send({ actor: 'erin@example.com', action: 'profile.viewed', resource: `profile/${i}`, chain: 'people' })
              .expect(201)
          ).body as { data: { id: string } }
        ).data.id,
      );
    await signIn(key, '/console/erasures');
    await page.getByRole('heading', { name: 'Erasures', exact: true }).waitFor();
    await page.getByText('No erasure in this account.').waitFor();
    await page.getByLabel('Events matching').fill('actor:erin@example.com');
    await page.getByLabel('Actor').check();
    await page.getByRole('button', { name: 'Count matching events' }).click();
    const question = page.getByRole('region', { name: 'Erase actor in 2 events?' });
    await expect(question.textContent()).resolves.toContain('The dry run found 2 events matching');
    // The dry run erased nothing.
    const actorOf = async (id: string) =>
      (
        (
          await t
            .http()
            .get(`/v1/events/${id}`)
            .set(...bearer(KEYS.acme))
            .expect(200)
        ).body as { data: { actor: string | null } }
      ).data.actor;
    await expect(actorOf(ids[0]!)).resolves.toBe('erin@example.com');
    await page.getByLabel('Reason (recorded with the erasure)').fill('GDPR request 2026-42');
    await page.getByLabel('Type 2 to confirm').fill('3');
    await page.getByRole('button', { name: 'Yes, erase in 2 events' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe('Type 2, the number of events, to confirm.');
    await expect(actorOf(ids[0]!)).resolves.toBe('erin@example.com');
    await page.getByLabel('Type 2 to confirm').fill('2');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'erasure-confirm.png'), fullPage: true });
    await page.getByRole('button', { name: 'Yes, erase in 2 events' }).click();
    await page.getByText(/^Erasure era_\w+ done: actor erased in 2 event\(s\)\.$/).waitFor();
    await expect(actorOf(ids[0]!)).resolves.toBeNull();
    const row = page.getByRole('row').filter({ hasText: 'GDPR request 2026-42' });
    await row.waitFor();
    const erasureId = (await row.locator('td').first().textContent())!;
    expect(erasureId).toMatch(/^era_/);
    await page.screenshot({ path: join(SCREENSHOTS, 'erasures.png'), fullPage: true });

    // The event: its actor is a mark, not a value, naming the erasure, when and why; still verified.
    await page.goto(`${origin}/console/events/${ids[1]}`);
    await page.getByText('Verified in your browser').waitFor();
    const actor = page.locator('.fields > div').filter({ has: page.locator('dt').getByText('Actor', { exact: true }) });
    await expect(actor.locator('.erased-mark').textContent()).resolves.toBe('erased');
    await expect(actor.locator('dd').textContent()).resolves.toMatch(
      new RegExp(`^erased by ${erasureId} at \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC: “GDPR request 2026-42”$`),
    );
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'event-erased.png'), fullPage: true });
  });

  it('shows every admin page at 1280 and 360 px in Los Angeles and in UTC, nothing squeezed, axe clean', async () => {
    for (const timezoneId of ['America/Los_Angeles', 'UTC']) {
      const zoned = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId });
      page = await zoned.newPage();
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      await signIn(ADMIN_KEYS.operator, '/console/accounts');
      const tz = timezoneId === 'UTC' ? 'utc' : 'la';
      for (const [name, ready] of [
        ['accounts', 'table tbody tr'],
        ['keys', 'table tbody tr'],
        ['streams', 'text=New destination'],
        ['erasures', 'text=Past erasures'],
      ] as const) {
        await page.setViewportSize({ width: 1280, height: 900 });
        await page.goto(`${origin}/console/${name}`);
        await page.locator(ready).first().waitFor();
        // What a person sees first (the viewport; the other tests keep full pages).
        await page.screenshot({ path: join(SCREENSHOTS, `${tz}-1280-${name}.png`) });
        await page.setViewportSize({ width: 360, height: 740 });
        await page.screenshot({ path: join(SCREENSHOTS, `${tz}-360-${name}.png`) });
        const { scroll, client } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          client: document.documentElement.clientWidth,
        }));
        expect({ name, scroll }).toEqual({ name, scroll: Math.min(scroll, client) });
        // The zone changes text, not layout: axe once per page.
        if (tz === 'utc')
          expect({ name, violations: await seriousAxeViolations(page) }).toEqual({ name, violations: [] });
      }
      await zoned.close();
    }
  });
});
