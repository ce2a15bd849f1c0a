import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

/**
 * What the service, the CLI and the witness load at run time is installed in production: the API's
 * image runs `npm ci --omit=dev`, so a package they import that package.json lists only under
 * devDependencies starts in every test here and fails to start there (it happened: ajv, the action
 * schemas' validator). Type-only imports vanish in the build and may name anything.
 */
const ROOT = join(__dirname, '..');
const SOURCES = ['apps/api/src', 'apps/cli/src', 'apps/witness/src', ...libraries()];
const IMPORT = /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'|require\('([^']+)'\)|import\('([^']+)'\)/gm;

function libraries(): string[] {
  // libs/client is a package of its own (its own package.json), bundled by its build.
  return readdirSync(join(ROOT, 'libs'))
    .filter((name) => name !== 'client')
    .map((name) => `libs/${name}/src`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'testing' ? [] : sourceFiles(path);
    return /\.ts$/.test(name) && !/\.(spec|fixture)\.ts$/.test(name) ? [path] : [];
  });
}

/** `@scope/name/deep/path` → `@scope/name`, `name/deep` → `name`. */
const packageOf = (specifier: string): string =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

describe('run-time dependencies', () => {
  it('every package the service, the CLI and the witness import at run time is a dependency, not a dev one', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const builtins = new Set(builtinModules);
    const missing = new Set<string>();
    for (const file of SOURCES.flatMap((dir) => sourceFiles(join(ROOT, dir)))) {
      for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        if (match[2]) continue; // import type … from: nothing is loaded
        const specifier = match[3] ?? match[4] ?? match[5]!;
        if (specifier.startsWith('.') || specifier.startsWith('node:') || specifier.startsWith('@app/')) continue;
        const name = packageOf(specifier);
        if (builtins.has(name) || name in manifest.dependencies) continue;
        missing.add(`${name} (${relative(ROOT, file)})`);
      }
    }
    expect([...missing]).toEqual([]);
  });
});
