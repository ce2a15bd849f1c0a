// Builds @audit-trail/client into dist/: one ESM and one CommonJS bundle for Node (libs/hashing,
// libs/verification and their one dependency, canonicalize, bundled in, so the published package
// imports nothing of the service's at run time and installs with no dependency), and the type
// declarations of the public API from `tsc --emitDeclarationOnly`.
// Run by `npm run build` in this folder (and by `npm pack`, through prepack).
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const out = join(here, 'dist');
const require = createRequire(import.meta.url);

export async function buildClient() {
  rmSync(out, { recursive: true, force: true });
  const common = {
    bundle: true,
    platform: 'node',
    target: 'node20',
    // tsconfig.json's paths resolve @app/hashing, @app/verification and @app/common/ids to their sources.
    tsconfig: join(root, 'tsconfig.json'),
    sourcemap: true,
    legalComments: 'linked',
    logLevel: 'warning',
    metafile: true,
  };
  const main = { ...common, entryPoints: [join(here, 'src', 'index.ts')] };
  // The NestJS module imports the client from the package itself (one AuditTrailClient class, the DI
  // token users inject) and NestJS and rxjs from the application (optional peer dependencies).
  const nestjs = {
    ...common,
    entryPoints: [join(here, 'src', 'nestjs', 'index.ts')],
    external: ['@audit-trail/client', '@nestjs/common', '@nestjs/core', 'rxjs'],
  };
  const results = await Promise.all([
    build({ ...main, format: 'esm', outfile: join(out, 'index.mjs') }),
    build({ ...main, format: 'cjs', outfile: join(out, 'index.cjs') }),
    build({ ...nestjs, format: 'esm', outfile: join(out, 'nestjs.mjs') }),
    build({ ...nestjs, format: 'cjs', outfile: join(out, 'nestjs.cjs') }),
    buildCli(join(out, 'cli.cjs')),
  ]);
  assertSelfContained(results[0].metafile, []);
  assertSelfContained(results[2].metafile, nestjs.external);
  assertSelfContained(results[4].metafile, []);
  declarations();
  return results;
}

/**
 * The package's command (package.json's bin: `audit-trail-client types …`, src/cli/main.ts), one
 * CommonJS file with the client bundled in; esbuild keeps the entry's `#!/usr/bin/env node`.
 */
export function buildCli(outfile) {
  return build({
    bundle: true,
    platform: 'node',
    target: 'node20',
    tsconfig: join(root, 'tsconfig.json'),
    logLevel: 'warning',
    metafile: true,
    entryPoints: [join(here, 'src', 'cli', 'main.ts')],
    format: 'cjs',
    outfile,
  });
}

/** Nothing but Node's own modules (and the peers named) may stay an import of a bundle. */
function assertSelfContained(metafile, allowed) {
  const outputs = Object.values(metafile.outputs);
  const external = outputs.flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  const foreign = external.filter((path) => !path.startsWith('node:') && !allowed.includes(path));
  if (foreign.length > 0) throw new Error(`the bundle imports ${foreign.join(', ')} at run time`);
}

/**
 * tsc writes the declarations of every file the client's program reads (libs/hashing's too) under
 * their paths from the repository's root; the package ships those that index.d.ts reaches, which
 * must name no `@app/` module (the public types are the client's own).
 */
function declarations() {
  const temp = join(out, '.types');
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json'), '--outDir', temp], {
    stdio: 'inherit',
  });
  const from = join(temp, 'libs', 'client', 'src');
  const reached = new Set();
  const visit = (file) => {
    if (reached.has(file)) return;
    reached.add(file);
    const text = readFileSync(join(from, file), 'utf8');
    if (/(from |import\()['"]@app\//.test(text))
      throw new Error(`${file} names an @app/ module: the published types must stand alone`);
    for (const [, path] of text.matchAll(/(?:from |import\()['"](\.{1,2}\/[^'"]+)['"]/g))
      visit(join(dirname(file), `${path}.d.ts`));
  };
  visit('index.d.ts');
  visit(join('nestjs', 'index.d.ts'));
  for (const file of reached) {
    mkdirSync(dirname(join(out, 'types', file)), { recursive: true });
    cpSync(join(from, file), join(out, 'types', file));
  }
  rmSync(temp, { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildClient();
}
