import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openApiDocument } from '../apps/api/src/openapi/openapi';
import { startTestApp, TestApp } from './support/test-app';

/**
 * The console's API types (apps/console/src/api-schema.ts) are generated from this service's
 * OpenAPI description by openapi-typescript. When the API changes, this fails until they are
 * regenerated with `npm run console:api-types`, whose typecheck then shows what the console must change.
 */
describe('the console’s API types', () => {
  let t: TestApp;
  const dir = mkdtempSync(join(tmpdir(), 'console-api-types-'));

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('are what openapi-typescript makes of the current OpenAPI description', () => {
    const root = join(__dirname, '..');
    writeFileSync(join(dir, 'openapi.json'), `${JSON.stringify(openApiDocument(t.app), null, 2)}\n`);
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
    const committed = readFileSync(join(root, 'apps', 'console', 'src', 'api-schema.ts'), 'utf8');
    expect(committed === generated ? 'up to date' : 'stale: run npm run console:api-types').toBe('up to date');
  });
});
