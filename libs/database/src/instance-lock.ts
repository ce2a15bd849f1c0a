import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, realpathSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const LOCK_FILE = 'instance.lock';

/** Lock files this process holds, by real path: its own pid in one of them is then no leftover. */
const held = new Set<string>();

interface Owner {
  pid: number;
  /** The process's start time (Linux `/proc/<pid>/stat`), so a reused pid is no owner; null elsewhere. */
  started: string | null;
}

/**
 * One running instance per DATA_DIR: two PGlite on one data directory would corrupt it, and two
 * services would sign two different checkpoints of one size. `DATA_DIR/instance.lock` (0600)
 * names its owner's pid and start time. It is created complete and atomically (written aside,
 * then hard-linked into place, which fails if it exists), so no reader sees half of it. One whose
 * owner no longer runs (killed, or its pid since reused) is a leftover: it is moved aside and
 * removed, and only if it is still the one judged (two instances starting at once cannot both
 * remove it and both start). It does not depend on the path's length or on any socket.
 */
export class InstanceLock {
  private constructor(
    private readonly path: string,
    private readonly content: string,
  ) {}

  /** Takes the lock of an existing `dataDir`, or throws when another running instance holds it. */
  static acquire(dataDir: string): InstanceLock {
    const path = join(realpathSync(dataDir), LOCK_FILE);
    const content = `${process.pid} ${startTimeOf(process.pid) ?? '-'}\n`;
    const candidate = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`;
    writeFileSync(candidate, content, { flag: 'wx', mode: 0o600 });
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        if (tryLink(candidate, path)) {
          held.add(path);
          return new InstanceLock(path, content);
        }
        const found = readIfExists(path);
        if (found === null) continue;
        const owner = parseOwner(found);
        if (owner && isRunning(owner, path)) {
          throw new Error(
            `Another running instance serves the embedded database in ${dataDir} (pid ${owner.pid}); stop it first`,
          );
        }
        removeIfStill(path, found);
      }
      throw new Error(`Other instances are starting on ${dataDir} at the same time; start one at a time`);
    } finally {
      unlinkSync(candidate);
    }
  }

  /** Removes the lock file if it is still this instance's. */
  release(): void {
    held.delete(this.path);
    if (readIfExists(this.path) === this.content) unlinkSync(this.path);
  }
}

function tryLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function readIfExists(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** `<pid> <start time or ->`; anything else (never written by us) is no owner. */
function parseOwner(text: string): Owner | null {
  const match = /^([1-9]\d{0,9}) (\d+|-)\n$/.exec(text);
  return match ? { pid: Number(match[1]), started: match[2] === '-' ? null : match[2]! } : null;
}

function isRunning(owner: Owner, path: string): boolean {
  if (owner.pid === process.pid) return held.has(path); // else a former life of this pid (a restarted container)
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false; // EPERM: it runs, as another user
  }
  const started = startTimeOf(owner.pid);
  return owner.started === null || started === null || started === owner.started;
}

/** Field 22 of `/proc/<pid>/stat` (clock ticks after boot), read after the command name's `)`; null without /proc. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/**
 * Removes the leftover `found` at `path`: moved aside first (atomic, so of two instances only one
 * gets it), then deleted if it is `found`, else (an instance took the lock meanwhile) put back.
 */
function removeIfStill(path: string, found: string): void {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if (readFileSync(aside, 'utf8') !== found && !tryLink(aside, path)) {
      throw new Error(`Other instances are starting on ${path} at the same time; start one at a time`);
    }
  } finally {
    unlinkSync(aside);
  }
}
