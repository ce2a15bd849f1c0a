// Builds the console (docs/contract.md §15) into dist/console: one JavaScript bundle and one stylesheet,
// both loaded from /console/ by index.html (no inline script or style: the CSP forbids them), and its icon.
// Run by `npm run build`; `node apps/console/build.mjs` alone rebuilds just the console.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', '..', 'dist', 'console');

export async function buildConsole() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = await build({
    entryPoints: { app: join(here, 'src', 'main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: out,
    metafile: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  copyFileSync(join(here, 'index.html'), join(out, 'index.html'));
  copyFileSync(join(here, 'favicon.svg'), join(out, 'favicon.svg'));
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildConsole();
}
