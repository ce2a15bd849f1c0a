import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { AppError } from '@app/common';

/** Where `npm run build` writes the console (apps/console/build.mjs), relative to the repository root. */
export const CONSOLE_BUILD_DIR = join('dist', 'console');

/**
 * The console's built files (docs/contract.md §15), found once: the first `dist/console` with an index.html
 * walking up from here, which is the repository root both for the compiled server
 * (dist/apps/api/apps/api/src/console) and for tests run from the sources. Only the files found
 * there at start are ever served, by name: a request path is never joined to a directory, so no
 * path can reach outside it. Any other path under /console is a page of the app (its index.html).
 */
@Injectable()
export class ConsoleFiles {
  private readonly files: ReadonlyMap<string, string>;
  private readonly index: string | null;

  constructor() {
    const root = findBuild(__dirname);
    this.files = new Map(
      root === null
        ? []
        : readdirSync(root)
            .filter((name) => statSync(join(root, name)).isFile())
            .map((name) => [name, join(root, name)]),
    );
    this.index = this.files.get('index.html') ?? null;
  }

  /** The file to send for a path under /console/ (`''` for /console itself). */
  resolve(path: string): string {
    if (this.index === null) throw AppError.notFound('The console (it is built by npm run build)');
    const name = path.startsWith('/') ? path.slice(1) : path;
    const file = this.files.get(name);
    if (file !== undefined) return file;
    // A missing asset is a 404; anything else is one of the app's pages.
    if (extname(name) !== '') throw AppError.notFound(`Console file ${name}`);
    return this.index;
  }
}

function findBuild(from: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, CONSOLE_BUILD_DIR);
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    if (dirname(dir) === dir) return null;
  }
}
