import request from 'supertest';
import { buildConsole } from './support/console-build';
import { startTestApp, TestApp } from './support/test-app';

/** docs/contract.md §15: the console's static files, public, under a CSP that allows no inline script and no other origin. */
describe('GET /console (the web console)', () => {
  let t: TestApp;
  const get = (path: string) => request(t.app.getHttpServer()).get(path);

  beforeAll(async () => {
    buildConsole();
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('serves the app without a key, with a CSP of this origin only and nosniff', async () => {
    const res = await get('/console').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.text).toContain('<script type="module" src="/console/app.js"></script>');
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/https?:|\*/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers every page of the app (deep links, reloads) with its index.html', async () => {
    const index = (await get('/console/').expect(200)).text;
    for (const path of [
      '/console/events',
      '/console/events/evt_01JDQ8Z5X3N4K7M2P9R6T0V1WA',
      '/console/keys?account=x',
    ]) {
      const res = await get(path).expect(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.text).toBe(index);
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    }
  });

  it('serves the script and the stylesheet with their content types', async () => {
    const js = await get('/console/app.js').expect(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    const css = await get('/console/app.css').expect(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('serves its icon, and leads / and /favicon.ico there (no 404 in a browser console, no 404 at the address the start-up names)', async () => {
    const icon = await get('/console/favicon.svg').expect(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    const index = (await get('/console').expect(200)).text;
    expect(index).toContain('<link rel="icon" type="image/svg+xml" href="/console/favicon.svg" />');
    await get('/').expect(302).expect('Location', '/console');
    await get('/favicon.ico').expect(301).expect('Location', '/console/favicon.svg');
  });

  it('answers a missing file and any path out of the build with the error envelope, never a file', async () => {
    for (const path of ['/console/missing.js', '/console/..%2Fpackage.json', '/console/%2e%2e/%2e%2e/package.json']) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: { code: 'NOT_FOUND' } });
    }
    const res = await get('/console/../package.json');
    expect(res.text).not.toContain('"dependencies"');
  });
});
