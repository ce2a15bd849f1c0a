import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/*
 * `npm ci` on the README's Node prints no EBADENGINE warning (issue 40 item 9): every package the lock
 * file installs, dev tools included, admits the least Node that package.json's `engines` allows (the
 * README's). @nats-io/nuid 3.0.0 wanted Node 22; the @nats-io 3.3 line uses nuid 2.0.3 (Node 18+).
 */
interface Semver {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
}
const semver = createRequire(__filename)('semver') as Semver;

const root = join(__dirname, '..');
const read = <T>(name: string) => JSON.parse(readFileSync(join(root, name), 'utf8')) as T;

describe('the packages npm ci installs', () => {
  it("all run on the least Node that package.json's engines (the README's) allow", () => {
    const own = read<{ engines: { node: string } }>('package.json').engines.node;
    const least = semver.minVersion(own)!.version;
    expect(semver.satisfies(least, '20')).toBe(true);
    const lock = read<{ packages: Record<string, { engines?: { node?: string } | string[] }> }>('package-lock.json');
    const refused = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, p]) => {
        const range = Array.isArray(p.engines) ? undefined : p.engines?.node;
        return range !== undefined && !semver.satisfies(least, range) ? [`${path} wants node ${range}`] : [];
      });
    expect(refused).toEqual([]);
  });
});
