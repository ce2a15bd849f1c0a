import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConsole, CONSOLE_BUILT_ENV } from './console-build';
import { EMBEDDED_TEMPLATE_ENV, postgresReachable, RUN_PREFIX_ENV } from './postgres';

/**
 * Chooses the database of this run: a real PostgreSQL server when one answers (each suite then
 * gets a fresh database named audit_test_<run>_<n>), else the embedded default, whose fresh data
 * directories are copies of one migrated here (embedded-template.ts).
 */
export default async function globalSetup(): Promise<void> {
  const usePostgres = process.env.E2E_EMBEDDED !== '1' && (await postgresReachable());
  process.env.E2E_MODE = usePostgres ? 'postgres' : 'embedded';
  process.env[RUN_PREFIX_ENV] = `audit_test_${process.pid}_${Date.now().toString(36)}`;
  if (!usePostgres) process.env[EMBEDDED_TEMPLATE_ENV] = migratedEmbeddedTemplate();
  buildConsole();
  process.env[CONSOLE_BUILT_ENV] = '1';
  // Service processes the suites start inherit this: no metrics listener on the fixed default port, where two
  // suites running side by side would collide (EADDRINUSE). A suite that checks metrics names its own port.
  process.env.METRICS_PORT ??= '0';
  console.log(
    `\ne2e database: ${usePostgres ? 'PostgreSQL (fresh database per suite)' : 'embedded PGlite (fresh data directory per suite)'}`,
  );
}

function migratedEmbeddedTemplate(): string {
  const dataDir = mkdtempSync(join(tmpdir(), 'audit-e2e-template-'));
  execFileSync(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      '-r',
      'tsconfig-paths/register',
      join(__dirname, 'embedded-template.ts'),
      dataDir,
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  return dataDir;
}
