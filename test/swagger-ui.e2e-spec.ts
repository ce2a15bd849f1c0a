import { AddressInfo } from 'node:net';
import { launchChromium } from './support/browser';
import { startTestApp, TestApp } from './support/test-app';

/*
 * Swagger UI at /docs in Debian's Chromium, under its Content-Security-Policy (issue 26 item 10; the
 * headers themselves: openapi.e2e-spec.ts). A browser suite: it runs on the host, not in Docker's
 * e2e container, which has no browser (docker/e2e-in-container.sh).
 */
describe('Swagger UI under its Content-Security-Policy', () => {
  let t: TestApp;
  let origin: string;
  let chromium: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    chromium = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it.each(['/docs/', '/docs'])(
    'Swagger UI at %s renders every operation with no CSP violation, script error or request elsewhere',
    async (path) => {
      const context = await chromium.browser.newContext();
      const problems: string[] = [];
      const elsewhere: string[] = [];
      try {
        const page = await context.newPage();
        page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
        page.on('console', (message) => {
          if (message.type() === 'error' || /Content Security Policy/i.test(message.text()))
            problems.push(`console ${message.type()}: ${message.text()}`);
        });
        page.on('request', (request) => {
          if (!request.url().startsWith(`${origin}/`) && !request.url().startsWith('data:'))
            elsewhere.push(request.url());
        });
        const response = await page.goto(origin + path);
        expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
        // One block per operation of the description, once the bundle and the init script ran.
        const operations = page.locator('.opblock');
        await operations.first().waitFor({ timeout: 20_000 });
        const paths = await page.locator('.opblock-summary-path').allTextContents();
        expect(paths.map((p) => p.replace(/\u200b/g, ''))).toEqual(
          expect.arrayContaining(['/v1/events', '/health/ready']),
        );
        const described = await t.http().get('/openapi.json').expect(200);
        const count = Object.values(described.body.paths as Record<string, Record<string, unknown>>).reduce(
          (n, item) =>
            n + Object.keys(item).filter((k) => ['get', 'put', 'post', 'delete', 'patch'].includes(k)).length,
          0,
        );
        expect(await operations.count()).toBe(count);
        // The page's own inline styles (allowed by their hashes) applied: body margin, the hidden SVG sprite.
        expect(await page.evaluate(() => getComputedStyle(document.body).marginTop)).toBe('0px');
        expect(await page.evaluate(() => getComputedStyle(document.querySelector('body > svg')!).position)).toBe(
          'absolute',
        );
        // An operation opens, and "Try it out" calls this origin (connect-src) and shows the answer.
        const live = page.locator('#operations-health-HealthController_live');
        await live.locator('.opblock-summary').click();
        await live.getByRole('button', { name: 'Try it out' }).click();
        await live.getByRole('button', { name: 'Execute' }).click();
        await live
          .locator('.live-responses-table tr.response .response-col_status')
          .first()
          .waitFor({ timeout: 10_000 });
        expect(
          (await live.locator('.live-responses-table tr.response .response-col_status').first().textContent())?.trim(),
        ).toBe('200');
      } finally {
        await context.close();
      }
      expect(problems).toEqual([]);
      expect(elsewhere).toEqual([]);
    },
    60_000,
  );
});
