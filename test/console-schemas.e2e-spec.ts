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
 * The console's Schemas page (docs/contract.md §15, §19; issue 42 item 4) in Chromium, against the real
 * service: an admin writes a schema in warn mode, sees its preview's count over the events already
 * there before Save is enabled, saves version 1, changes it to enforce (previewed again), compares the
 * two versions side by side, and deletes it in the page; the enforced version refuses an event over
 * the API. A schema's hostile text is text; every state at 1280 and 360 px, axe clean; an operator
 * reads another account's; a read key is told in words that it may not.
 */
const SCREENSHOTS = join(__dirname, '..', 'dist', 'console-screenshots');

const AMOUNT_SCHEMA = {
  type: 'object',
  properties: {
    context: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
  },
  required: ['context'],
};
const ENFORCED_SCHEMA = {
  type: 'object',
  properties: {
    context: {
      type: 'object',
      properties: { amount: { type: 'number', minimum: 0 }, currency: { enum: ['EUR', 'USD'] } },
      required: ['amount'],
    },
  },
  required: ['context'],
};
const HOSTILE = '<img src=x onerror="window.__schemasXss=1"><b>bold</b>';

describe('the console: Schemas', () => {
  let t: TestApp;
  let origin: string;
  let chromium: { browser: Browser; close: () => Promise<void> };
  let context: BrowserContext;
  let page: Page;
  let acmeId: string;
  const problems: string[] = [];

  const signIn = async (key: string, path = '/console/schemas') => {
    await page.goto(origin + path);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  };
  const nav = () => page.getByRole('navigation', { name: 'Main' });
  const row = (action: string) =>
    page.getByRole('row').filter({ has: page.getByRole('cell', { name: action, exact: true }) });
  const append = async (action: string, context: Record<string, unknown>, status: number) =>
    (
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: 'alice', action, resource: 'invoice:42', context })
        .expect(status)
    ).body as { data: { id: string }; error: { code: string; details: Record<string, unknown> } };
  /** A schema saved over the API (fetch: its 201 is the schemas branch's fix of a 200, whichever this build answers). */
  const putSchema = async (action: string, schema: object, mode: 'warn' | 'enforce') => {
    const res = await fetch(`${origin}/v1/accounts/${acmeId}/schemas/${encodeURIComponent(action)}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${ADMIN_KEYS.acmeAdmin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ schema, mode }),
    });
    expect([200, 201]).toContain(res.status);
  };
  const audited = async (action: string) =>
    (
      (
        await t
          .http()
          .get('/v1/events')
          .query({ q: `chain:_audit action:${action}`, limit: 100 })
          .set(...bearer(KEYS.acme))
          .expect(200)
      ).body as { data: { context: Record<string, unknown> }[] }
    ).data.reverse();
  /** At 1280, 360 and 768 px: a screenshot, nothing wider than the screen, no squeezed cell, axe clean. */
  const everyWidth = async (name: string) => {
    for (const width of [1280, 360, 768]) {
      await page.setViewportSize({ width, height: width === 1280 ? 900 : 740 });
      await page.screenshot({
        path: join(SCREENSHOTS, `${width === 1280 ? '' : `${width}-`}${name}.png`),
        fullPage: true,
      });
      const { scroll, client } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth,
      }));
      expect(scroll).toBeLessThanOrEqual(client);
      await expect(crampedTexts(page, 'tbody td')).resolves.toEqual([]);
      expect(await seriousAxeViolations(page)).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  };

  beforeAll(async () => {
    buildConsole();
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    chromium = await launchChromium();
    acmeId = (
      (
        await t
          .http()
          .get('/v1/me')
          .set(...bearer(ADMIN_KEYS.acmeAdmin))
          .expect(200)
      ).body as { data: { accountId: string } }
    ).data.accountId;
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

  it('an admin previews, saves in warn, enforces, compares the versions and deletes; enforce refuses over the API', async () => {
    // Five events already there, two of which the schema would reject (the newest first in the preview).
    await append('invoice.approve', { amount: 10 }, 201);
    const missing = (await append('invoice.approve', { approver: 'bob' }, 201)).data.id;
    await append('invoice.approve', { amount: 0 }, 201);
    const text = (await append('invoice.approve', { amount: 'ten' }, 201)).data.id;
    await append('invoice.approve', { amount: 12.5 }, 201);

    await signIn(ADMIN_KEYS.acmeAdmin);
    await expect(nav().getByRole('link', { name: 'Schemas' }).count()).resolves.toBe(1);
    await page.getByRole('heading', { name: 'Schemas', exact: true, level: 1 }).waitFor();
    await page.getByText('No schema yet: every action’s events are free-form.').waitFor();
    const editor = page.getByRole('form', { name: 'New schema' });
    const save = editor.getByRole('button', { name: /^Save version/ });
    await editor.getByLabel('Action').fill('invoice.approve');
    await expect(editor.getByRole('radio', { name: /^warn:/ }).isChecked()).resolves.toBe(true);
    await editor.getByLabel(/^Schema/).fill(JSON.stringify(AMOUNT_SCHEMA, null, 2));
    await expect(save.isDisabled()).resolves.toBe(true);
    await expect(editor.getByText('Save is enabled once the preview has run on this text.').count()).resolves.toBe(1);
    await everyWidth('schemas-new');

    await editor.getByRole('button', { name: 'Preview against recent events' }).click();
    await editor
      .getByRole('status')
      .getByText(/^This version would reject 2 of the last 5 events of invoice\.approve\./)
      .waitFor();
    // The first examples, newest first: each event's page, the field and why.
    const examples = editor.getByRole('table', { name: /^The first 2 it would reject/ });
    await expect(
      examples.getByRole('link').evaluateAll((links) => links.map((a) => a.getAttribute('href'))),
    ).resolves.toEqual([`/console/events/${text}`, `/console/events/${missing}`]);
    await expect(examples.locator('td[data-label="Field"]').allTextContents()).resolves.toEqual([
      'context.amount',
      'context.amount',
    ]);
    await expect(examples.locator('td[data-label="Why"]').first().textContent()).resolves.toMatch(/number/);
    await expect(save.isDisabled()).resolves.toBe(false);
    await everyWidth('schemas-preview');

    // Any change of the text asks for the preview again.
    await editor.getByLabel(/^Schema/).fill(JSON.stringify(AMOUNT_SCHEMA));
    await expect(save.isDisabled()).resolves.toBe(true);
    await expect(editor.getByRole('table').count()).resolves.toBe(0);
    await editor.getByRole('button', { name: 'Preview against recent events' }).click();
    await editor.getByText(/^This version would reject 2 of the last 5 events/).waitFor();
    await save.click();
    await page.getByText('Version 1 of invoice.approve saved, mode warn: ').waitFor();
    expect(new URL(page.url()).searchParams.get('action')).toBe('invoice.approve');
    const heading = page.getByRole('heading', { level: 2 }).filter({ hasText: 'invoice.approve: version' });
    await expect(heading.textContent()).resolves.toBe('invoice.approve: version 1, △ warn');
    // One version: its schema as text, whole (in the order PostgreSQL's jsonb keeps an object's members).
    expect(JSON.parse((await page.getByLabel('Schema of version 1').textContent())!)).toEqual(AMOUNT_SCHEMA);
    // Under warn, a bad event is stored.
    await append('invoice.approve', { amount: 'eleven' }, 201);

    // The next version: enforce, previewed again over the six events.
    const next = page.getByRole('form', { name: 'Next version of invoice.approve (version 2)' });
    expect(JSON.parse(await next.getByLabel(/^Schema/).inputValue())).toEqual(AMOUNT_SCHEMA);
    await next.getByRole('radio', { name: /^enforce:/ }).check();
    await next.getByLabel(/^Schema/).fill(JSON.stringify(ENFORCED_SCHEMA, null, 2));
    await expect(next.getByRole('button', { name: 'Save version 2' }).isDisabled()).resolves.toBe(true);
    await next.getByRole('button', { name: 'Preview against recent events' }).click();
    await next.getByText(/^This version would reject 3 of the last 6 events of invoice\.approve\./).waitFor();
    await next.getByRole('button', { name: 'Save version 2' }).click();
    await page.getByText('Version 2 of invoice.approve saved, mode enforce: ').waitFor();
    await expect(heading.textContent()).resolves.toBe('invoice.approve: version 2, ■ enforce');

    // Side by side: version 1 on the left, 2 on the right, the differences marked in the text.
    const compare = page.getByRole('region', { name: 'Versions side by side' });
    await expect(compare.getByLabel('Left: version').inputValue()).resolves.toBe('1');
    await expect(compare.getByLabel('Right: version').inputValue()).resolves.toBe('2');
    // Once both versions are loaded (before, the status is the loading one), what differs is said in words.
    await compare.getByText(/^\d+ lines? removed \(marked −\), \d+ lines? added \(marked \+\)\.$/).waitFor();
    // amount's `"type": "number"` lost its line to `"type": "number",` (minimum follows); currency is new.
    const removed = await compare.locator('del').allTextContents();
    expect(removed.every((line) => line.startsWith('− '))).toBe(true);
    expect(removed.some((line) => /"type": "number"\n$/.test(line))).toBe(true);
    const added = await compare.locator('ins').allTextContents();
    expect(added.every((line) => line.startsWith('+ '))).toBe(true);
    expect(added.join('')).toContain('"minimum": 0');
    expect(added.join('')).toContain('"currency"');
    // Each side is its version's whole text, each line after its mark.
    const unmarked = async (version: number) =>
      (await compare.getByLabel(`Schema of version ${version}`).textContent())!
        .split('\n')
        .slice(0, -1)
        .map((line) => line.slice(2))
        .join('\n');
    expect(JSON.parse(await unmarked(1))).toEqual(AMOUNT_SCHEMA);
    expect(JSON.parse(await unmarked(2))).toEqual(ENFORCED_SCHEMA);
    await everyWidth('schemas-versions');

    // The enforced version refuses a bad event over the API, naming the field and the version; a good one passes.
    const refused = await append('invoice.approve', { amount: -1 }, 400);
    expect(refused.error.code).toBe('VALIDATION_ERROR');
    expect(refused.error.details).toEqual(
      expect.objectContaining({
        schema: { action: 'invoice.approve', version: 2 },
        fields: [expect.objectContaining({ field: 'context.amount' })],
      }),
    );
    await append('invoice.approve', { amount: 1, currency: 'EUR' }, 201);

    // The two versions chosen are the URL's: a reload shows the same.
    await compare.getByLabel('Right: version').selectOption('1');
    expect(new URL(page.url()).searchParams.get('to')).toBe('1');
    await page.reload();
    await page
      .getByRole('region', { name: 'Versions side by side' })
      .getByText('The two versions’ schemas are the same.')
      .waitFor();

    // Delete asks in the page first; Cancel keeps it.
    await page.getByRole('button', { name: 'Delete schema…' }).click();
    const confirm = page.getByRole('region', { name: 'Delete the schema of ‘invoice.approve’?' });
    await expect(confirm.textContent()).resolves.toContain('Version 3 will have no schema');
    await everyWidth('schemas-delete');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect(confirm.count()).resolves.toBe(0);
    await append('invoice.approve', { amount: -2 }, 400);
    await page.getByRole('button', { name: 'Delete schema…' }).click();
    await page.getByRole('button', { name: 'Yes, delete the schema of invoice.approve' }).click();
    await page.getByText(/^The schema of invoice\.approve is deleted \(version 3\)/).waitFor();
    await expect(heading.textContent()).resolves.toBe('invoice.approve: version 3, ✕ deleted');
    await expect(page.getByRole('button', { name: 'Delete schema…' }).count()).resolves.toBe(0);
    await append('invoice.approve', { amount: -3 }, 201);
    await expect(audited('schema.changed').then((a) => a.map((e) => e.context))).resolves.toEqual([
      { action: 'invoice.approve', version: 1, mode: 'warn' },
      { action: 'invoice.approve', version: 2, mode: 'enforce' },
      { action: 'invoice.approve', version: 3, mode: 'deleted' },
    ]);

    await page.getByRole('link', { name: 'All schemas' }).click();
    await expect(row('invoice.approve').locator('td[data-label="Version"]').textContent()).resolves.toBe('3');
    await expect(row('invoice.approve').locator('td[data-label="Mode"]').textContent()).resolves.toBe('✕ deleted');
  });

  it('shows each mode with a mark and words, and a schema’s hostile text as text, at every width', async () => {
    const hostileAction = 'doc.<b>read</b>';
    await putSchema('doc.export', { type: 'object', required: ['resource'] }, 'enforce');
    await putSchema('payment.*', { type: 'object', properties: { actor: { type: 'string', minLength: 3 } } }, 'warn');
    await putSchema(
      hostileAction,
      {
        type: 'object',
        description: HOSTILE,
        properties: {
          context: { type: 'object', properties: { [HOSTILE]: { type: 'string', description: HOSTILE } } },
        },
      },
      'warn',
    );
    await signIn(ADMIN_KEYS.acmeAdmin);
    await row('doc.export').waitFor();
    await expect(row('doc.export').locator('td[data-label="Mode"]').textContent()).resolves.toBe('■ enforce');
    await expect(row('payment.*').locator('td[data-label="Mode"]').textContent()).resolves.toBe('△ warn');
    await expect(row(hostileAction).locator('td[data-label="Changed"]').textContent()).resolves.toMatch(
      /by key key_[0-9A-Z]{26}$/,
    );
    await everyWidth('schemas');

    await row(hostileAction).getByRole('link', { name: hostileAction }).click();
    const shown = page.getByLabel('Schema of version 1');
    await expect(shown.textContent()).resolves.toContain(`"description": ${JSON.stringify(HOSTILE)}`);
    await expect(shown.textContent()).resolves.toContain(`${JSON.stringify(HOSTILE)}: {`);
    await expect(page.locator('main img, main b').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (window as unknown as { __schemasXss?: number }).__schemasXss)).resolves.toBe(
      undefined,
    );
    await everyWidth('schemas-hostile');
  });

  it('says in words what is wrong with a schema, in the page and from the service', async () => {
    await signIn(ADMIN_KEYS.acmeAdmin);
    const editor = page.getByRole('form', { name: 'New schema' });
    await editor.getByLabel('Action').fill('report.run');
    await editor.getByLabel(/^Schema/).fill('{"type": "object",');
    await editor.getByRole('button', { name: 'Preview against recent events' }).click();
    await expect(editor.getByRole('alert').textContent()).resolves.toMatch(/^The schema is not JSON: /);
    await editor.getByLabel(/^Schema/).fill('{"$ref": "https://evil.example/schema.json"}');
    await editor.getByRole('button', { name: 'Preview against recent events' }).click();
    await expect(editor.getByRole('alert').textContent()).resolves.toMatch(/schema.*\$ref/);
    await expect(editor.getByRole('button', { name: /^Save version/ }).isDisabled()).resolves.toBe(true);
    await everyWidth('schemas-refused');
  });

  it("an operator reads and changes another account's schemas, chosen in the header", async () => {
    await putSchema('team.join', { type: 'object' }, 'warn');
    await signIn(ADMIN_KEYS.operator, `/console/schemas?account=${acmeId}`);
    await page.getByRole('heading', { name: `Schemas of ${acmeId}`, level: 1 }).waitFor();
    await row('team.join').getByRole('link', { name: 'team.join' }).click();
    expect(new URL(page.url()).searchParams.get('account')).toBe(acmeId);
    const next = page.getByRole('form', { name: 'Next version of team.join (version 2)' });
    await next.getByRole('radio', { name: /^enforce:/ }).check();
    await next.getByRole('button', { name: 'Preview against recent events' }).click();
    await next.getByText('No event of team.join yet: this version rejects none so far.').waitFor();
    await next.getByRole('button', { name: 'Save version 2' }).click();
    await page.getByText('Version 2 of team.join saved, mode enforce: ').waitFor();
    const latest = await t
      .http()
      .get(`/v1/accounts/${acmeId}/schemas/team.join`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .expect(200);
    expect((latest.body as { data: { version: number; mode: string } }).data).toEqual(
      expect.objectContaining({ version: 2, mode: 'enforce' }),
    );
  });

  it('a read key has no Schemas entry, and the page says in words that it may not', async () => {
    await signIn(KEYS.acmeReadOnly, '/console/events');
    await nav().getByRole('link', { name: 'Events' }).waitFor();
    await expect(nav().getByRole('link', { name: 'Schemas' }).count()).resolves.toBe(0);
    await page.goto(`${origin}/console/schemas`);
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'This key may not see or change action schemas: they are for admin keys of their account and for operator keys. This key has read.',
    );
    await everyWidth('schemas-read-key');
  });
});
