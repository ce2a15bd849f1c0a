import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openApiDocument } from '../apps/api/src/openapi/openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The client library's route types (libs/client/src/api-schema.ts, docs/contract.md §20) are
 * generated from this service's OpenAPI description by openapi-typescript (the console's types take
 * them too: one copy).
 * When the API changes, this fails until they are regenerated with `npm run client:api-types`,
 * whose typecheck then shows which of the client's calls must change; and every route the
 * description lists must be one the client calls.
 */
describe('the client library’s API types', () => {
  let t: TestApp;
  let document: { paths: Record<string, Record<string, unknown>> };
  const dir = mkdtempSync(join(tmpdir(), 'client-api-types-'));
  const root = join(__dirname, '..');

  beforeAll(async () => {
    t = await startTestApp();
    document = openApiDocument(t.app) as unknown as typeof document;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are what openapi-typescript makes of the current OpenAPI description', () => {
    writeFileSync(join(dir, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
    execFileSync(
      process.execPath,
      [
        join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'),
        join(dir, 'openapi.json'),
        '-o',
        join(dir, 'api-schema.ts'),
      ],
      { stdio: 'pipe' },
    );
    const generated = readFileSync(join(dir, 'api-schema.ts'), 'utf8');
    const committed = readFileSync(join(root, 'libs', 'client', 'src', 'api-schema.ts'), 'utf8');
    expect(committed === generated ? 'up to date' : 'stale: run npm run client:api-types').toBe('up to date');
  });

  it('cover every route of the description with a call of the client', () => {
    const sources = ['resources/events.ts', 'resources/chains.ts', 'resources/admin.ts', 'resources/health.ts']
      .map((file) => readFileSync(join(root, 'libs', 'client', 'src', file), 'utf8'))
      .join('\n');
    const called = new Set(
      [...sources.matchAll(/\.(call|raw)\(\s*'(get|post|put|patch|delete)',\s*'([^']+)'/g)].map(
        ([, , m, p]) => `${m} ${p}`,
      ),
    );
    const listed = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method} ${path}`),
    );
    // /console serves the web page for people (§15), not an API route.
    expect(listed.filter((route) => !called.has(route) && !route.includes('/console'))).toEqual([]);
  });
});
