import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { restrictToOwner } from './owner-only';

describe('restrictToOwner', () => {
  let dir: string;
  let outside: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'owner-only-'));
    outside = mkdtempSync(join(tmpdir(), 'owner-only-outside-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });
  const mode = (path: string): number => statSync(path).mode & 0o7777;

  it('takes group and other bits off the root and everything below, names what it changed, and leaves symbolic links alone', () => {
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, 'base', 'db'), { recursive: true, mode: 0o777 });
    chmodSync(join(dir, 'base'), 0o777);
    chmodSync(join(dir, 'base', 'db'), 0o750);
    writeFileSync(join(dir, 'base', 'db', '1259'), 'x', { mode: 0o666 });
    chmodSync(join(dir, 'base', 'db', '1259'), 0o666);
    writeFileSync(join(dir, 'private'), 'x', { mode: 0o600 });
    writeFileSync(join(outside, 'target'), 'x');
    chmodSync(join(outside, 'target'), 0o644);
    symlinkSync(join(outside, 'target'), join(dir, 'link'));

    const sut = restrictToOwner(dir);

    expect(sut.sort()).toEqual(['.', 'base', join('base', 'db'), join('base', 'db', '1259')].sort());
    expect([mode(dir), mode(join(dir, 'base')), mode(join(dir, 'base', 'db'))]).toEqual([0o700, 0o700, 0o700]);
    expect(mode(join(dir, 'base', 'db', '1259'))).toBe(0o600);
    expect(mode(join(dir, 'private'))).toBe(0o600);
    expect(mode(join(outside, 'target'))).toBe(0o644);
    expect(restrictToOwner(dir)).toEqual([]);
  });
});
