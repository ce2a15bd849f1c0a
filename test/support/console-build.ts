import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Set by the e2e run's global setup once it has built the console for all its suites. */
export const CONSOLE_BUILT_ENV = 'E2E_CONSOLE_BUILT';

/**
 * Builds the console into dist/console as `npm run build` does (esbuild: well under a second). In an
 * e2e run the global setup has built it once for every suite: suites in parallel workers must not
 * rewrite the files another one's browser is loading.
 */
export function buildConsole(): void {
  if (process.env[CONSOLE_BUILT_ENV] === '1') return;
  execFileSync(process.execPath, [join(__dirname, '..', '..', 'apps', 'console', 'build.mjs')], { stdio: 'inherit' });
}
