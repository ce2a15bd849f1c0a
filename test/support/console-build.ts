import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Builds the console into dist/console as `npm run build` does (esbuild: well under a second). */
export function buildConsole(): void {
  execFileSync(process.execPath, [join(__dirname, '..', '..', 'apps', 'console', 'build.mjs')], { stdio: 'inherit' });
}
