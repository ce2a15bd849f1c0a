import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { openApiDocument } from '../../apps/api/src/openapi/openapi';
import { startTestApp } from './test-app';

/**
 * `npm run lint:openapi`: writes the generated OpenAPI document to a file, from the app booted as
 * the e2e tests boot it (a throwaway embedded database; the HTTP server never listens), for Redocly to lint.
 */
async function main(file: string): Promise<void> {
  const t = await startTestApp();
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(openApiDocument(t.app), null, 2)}\n`);
  } finally {
    await t.close();
  }
}

main(process.argv[2] ?? 'dist/openapi.json').catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
