import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InstanceLock } from './instance-lock';

/** Field 22 of /proc/<pid>/stat: the process's start time. */
const startTimeOf = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
};

describe('InstanceLock', () => {
  let dir: string;
  const lockFile = () => join(dir, 'instance.lock');
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'instance-lock-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('is held once: a second take is refused until the first is released, and nothing is left after', () => {
    const sut = InstanceLock.acquire(dir);
    expect(statSync(lockFile()).mode & 0o777).toBe(0o600);
    expect(readFileSync(lockFile(), 'utf8')).toBe(`${process.pid} ${startTimeOf(process.pid)}\n`);
    expect(() => InstanceLock.acquire(dir)).toThrow(/Another running instance .* \(pid \d+\)/);
    symlinkSync(dir, `${dir}-link`);
    try {
      expect(() => InstanceLock.acquire(`${dir}-link`)).toThrow(/Another running instance/); // the same directory
    } finally {
      rmSync(`${dir}-link`);
    }
    sut.release();
    InstanceLock.acquire(dir).release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses while another running process holds it', () => {
    writeFileSync(lockFile(), `${process.ppid} ${startTimeOf(process.ppid)}\n`);
    expect(() => InstanceLock.acquire(dir)).toThrow(`(pid ${process.ppid})`);
  });

  it.each([
    ['a process that has exited', () => `${spawnSync(process.execPath, ['-e', '']).pid} 1\n`],
    ['a pid since reused by another process', () => `${process.ppid} 1\n`],
    ['a former life of this pid (a restarted container)', () => `${process.pid} 1\n`],
    ['text it never writes', () => 'garbage'],
  ])('takes over a lock left by %s', (_case, content) => {
    writeFileSync(lockFile(), content());
    const sut = InstanceLock.acquire(dir);
    expect(readFileSync(lockFile(), 'utf8')).toBe(`${process.pid} ${startTimeOf(process.pid)}\n`);
    sut.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});
