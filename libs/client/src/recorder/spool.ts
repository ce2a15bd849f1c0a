import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { FileHandle, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { headerLine, parseSpoolLine, SpoolLine } from './spool-format';
import { recoverSpool, RecoveredSpool } from './spool-recovery';

/** The spool would grow past its bound: record() refuses the event rather than drop anything later. */
export class SpoolFullError extends Error {
  override readonly name = 'SpoolFullError';
}

/** Another live process holds this spool directory. */
export class SpoolLockedError extends Error {
  override readonly name = 'SpoolLockedError';
}

/**
 * When appended lines reach the disk. `batch`: each group commit is fdatasynced before its appends
 * resolve (nothing acknowledged to the application is lost, even by a power cut). `interval`: appends
 * resolve once written (in the page cache: they survive the process's death, kill -9 included) and
 * the file is fdatasynced every `fsyncIntervalMs`; `none`: the operating system writes back when it
 * will. With either, a crash of the machine loses what was written since the last sync: recorded
 * events, and batch or acknowledgement lines, so a batch sent just before may be sent again under a
 * new key after the restart (stored twice).
 */
export type FsyncMode = 'batch' | 'interval' | 'none';

export interface SpoolOptions {
  dir: string;
  /** The bound on the files' total size (default 256 MiB). */
  maxBytes?: number;
  /** A new file is begun once the current one passes this size (default 4 MiB). */
  segmentBytes?: number;
  /** Default `batch`. */
  fsync?: FsyncMode;
  /** With `interval`: how often (default 1,000 ms). */
  fsyncIntervalMs?: number;
}

const FILE = /^(\d{10})\.log$/;
const fileName = (n: number): string => `${String(n).padStart(10, '0')}.log`;

interface Segment {
  n: number;
  bytes: number;
  /** The highest event number written to it (-1: none). */
  maxSeq: number;
}

/**
 * The durable spool: append-only files of lines (spool-format.ts) in one directory that one process
 * holds (a lock file naming its pid; a dead holder's lock is taken over). Appends are group
 * committed: the lines asked for while one write and fdatasync are under way go out together in the
 * next, and each append resolves once its lines are on disk. Files are only ever removed whole,
 * oldest first, once every event in them is settled.
 */
export class Spool {
  private readonly segments: Segment[] = [];
  private handle: FileHandle | null = null;
  private pending: { text: string; maxSeq: number; done: () => void; failed: (e: unknown) => void }[] = [];
  private writing: Promise<void> | null = null;
  private totalBytes = 0;
  private pendingBytes = 0;
  private readonly maxBytes: number;
  private readonly segmentBytes: number;
  private closed = false;
  private readonly mode: FsyncMode;
  /** Written since the last fdatasync (interval, none). */
  private dirty = false;
  /** The interval's timer asks for an fdatasync of what is written. */
  private syncDue = false;
  private readonly timer: NodeJS.Timeout | null = null;
  /** fdatasyncs done (the header of each file included): what tests and metrics observe. */
  syncs = 0;

  private constructor(
    private readonly dir: string,
    options: SpoolOptions,
    /** Every event numbered below it is settled: the header of each new file says so. */
    private readonly settledBelow: () => number,
  ) {
    this.maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
    this.segmentBytes = options.segmentBytes ?? 4 * 1024 * 1024;
    this.mode = options.fsync ?? 'batch';
    if (!['batch', 'interval', 'none'].includes(this.mode))
      throw new TypeError("fsync must be 'batch', 'interval' or 'none'");
    if (this.mode === 'interval') {
      const ms = options.fsyncIntervalMs ?? 1000;
      if (!(ms > 0)) throw new TypeError('fsyncIntervalMs must be a number > 0');
      this.timer = setInterval(() => {
        if (!this.dirty || this.closed) return;
        this.syncDue = true;
        this.writing ??= this.drain();
      }, ms);
      this.timer.unref();
    }
  }

  /** Locks the directory and reads what it holds; appends then go to a new file. */
  static async open(
    options: SpoolOptions,
    settledBelow: () => number,
  ): Promise<{ spool: Spool; recovered: RecoveredSpool }> {
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    lock(options.dir);
    const spool = new Spool(options.dir, options, settledBelow);
    const names = readdirSync(options.dir)
      .map((name) => FILE.exec(name))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
    const lines: SpoolLine[] = [];
    for (const n of names) {
      const text = await readFile(join(options.dir, fileName(n)), 'utf8');
      let maxSeq = -1;
      for (const line of completeLines(text)) {
        const parsed = parseSpoolLine(line);
        if (parsed === null) continue;
        if (parsed.t === 'e') maxSeq = Math.max(maxSeq, parsed.n);
        lines.push(parsed);
      }
      spool.segments.push({ n, bytes: Buffer.byteLength(text), maxSeq });
      spool.totalBytes += Buffer.byteLength(text);
    }
    const recovered = recoverSpool(lines);
    // The new file's header may only claim what is settled: everything below the first event left to send.
    const waiting = [...recovered.live.flatMap((b) => b.events), ...recovered.unsent].map((e) => e.seq);
    await spool.begin((names.at(-1) ?? 0) + 1, Math.min(recovered.nextSeq, ...waiting));
    return { spool, recovered };
  }

  /** The number of the file appends go to now (where a line appended next will be). */
  get currentSegment(): number {
    return this.segments.at(-1)?.n ?? 0;
  }

  get bytes(): number {
    return this.totalBytes + this.pendingBytes;
  }

  /** Throws SpoolFullError when `bytes` more would pass the bound (events only: control lines always fit). */
  reserve(bytes: number): void {
    if (this.bytes + bytes > this.maxBytes)
      throw new SpoolFullError(
        `the spool in ${this.dir} holds ${this.bytes} bytes of ${this.maxBytes} allowed (maxSpoolBytes): the service has not acknowledged what it holds; the event was not recorded`,
      );
  }

  /** Appends lines (each ending in a newline); resolves once they are on disk. `maxSeq`: the highest event number among them. */
  append(text: string, maxSeq = -1): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the spool is closed'));
    this.pendingBytes += Buffer.byteLength(text);
    const written = new Promise<void>((done, failed) => this.pending.push({ text, maxSeq, done, failed }));
    this.writing ??= this.drain();
    return written;
  }

  /** Reads the lines of file `n` from byte `offset`: complete lines only, and the offset after them. */
  async readFrom(n: number, offset: number, maxBytes: number): Promise<{ lines: SpoolLine[]; next: number }> {
    const file = await open(join(this.dir, fileName(n)), 'r');
    try {
      const buffer = Buffer.alloc(maxBytes);
      const { bytesRead } = await file.read(buffer, 0, maxBytes, offset);
      const text = buffer.subarray(0, bytesRead).toString('utf8');
      const end = text.lastIndexOf('\n');
      if (end < 0) return { lines: [], next: offset };
      const complete = text.slice(0, end + 1);
      const lines = completeLines(complete)
        .map(parseSpoolLine)
        .filter((l): l is SpoolLine => l !== null);
      return { lines, next: offset + Buffer.byteLength(complete) };
    } finally {
      await file.close();
    }
  }

  /** The file after `n`, or null when `n` is the newest. */
  nextSegment(n: number): number | null {
    return this.segments.find((s) => s.n > n)?.n ?? null;
  }

  /** Removes the oldest files whose events are all settled (never the one appends go to). */
  async prune(): Promise<void> {
    const below = this.settledBelow();
    while (this.segments.length > 1 && this.segments[0]!.maxSeq < below) {
      const segment = this.segments.shift()!;
      this.totalBytes -= segment.bytes;
      await unlink(join(this.dir, fileName(segment.n))).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    while (this.writing) await this.writing;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.dirty && this.handle) await this.sync();
    await this.handle?.close();
    this.handle = null;
    try {
      unlinkSync(join(this.dir, 'lock'));
    } catch {
      // already gone
    }
  }

  private async begin(n: number, below: number): Promise<void> {
    if (this.dirty && this.mode === 'interval' && this.handle) await this.sync();
    await this.handle?.close();
    this.dirty = false;
    this.handle = await open(join(this.dir, fileName(n)), 'wx', 0o600);
    const header = headerLine(below);
    await this.handle.write(header);
    await this.sync();
    // The new file's name reaches the disk too: without the directory's fsync, a power cut could
    // lose the file whose lines were synced (in `batch` mode, promised to the caller).
    if (this.mode === 'batch') await syncDirectory(this.dir);
    this.segments.push({ n, bytes: Buffer.byteLength(header), maxSeq: -1 });
    this.totalBytes += Buffer.byteLength(header);
  }

  private async sync(): Promise<void> {
    await this.handle!.datasync();
    this.syncs++;
    this.dirty = false;
  }

  /** Writes what is pending, one write (and in `batch` one fdatasync) a round, until nothing is. */
  private async drain(): Promise<void> {
    while (this.pending.length > 0 || this.syncDue) {
      const round = this.pending;
      this.pending = [];
      const text = round.map((p) => p.text).join('');
      const bytes = Buffer.byteLength(text);
      try {
        if (bytes > 0) await this.handle!.write(text);
        this.dirty ||= bytes > 0;
        if (this.mode === 'batch' || this.syncDue) {
          this.syncDue = false;
          if (this.dirty) await this.sync();
        }
        const segment = this.segments.at(-1)!;
        segment.bytes += bytes;
        segment.maxSeq = Math.max(segment.maxSeq, ...round.map((p) => p.maxSeq));
        this.totalBytes += bytes;
        this.pendingBytes -= bytes;
        round.forEach((p) => p.done());
        if (segment.bytes >= this.segmentBytes) await this.begin(segment.n + 1, this.settledBelow());
      } catch (error) {
        this.pendingBytes -= bytes;
        round.forEach((p) => p.failed(error));
      }
    }
    this.writing = null;
  }
}

/** The lines of `text` that end in a newline (a last line without one was cut short by a crash). */
function completeLines(text: string): string[] {
  const lines = text.split('\n');
  lines.pop();
  return lines.filter((line) => line.length > 0);
}

/** Takes the directory's lock file, or throws SpoolLockedError while a live process holds it. */
function lock(dir: string): void {
  const path = join(dir, 'lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileSync(path, 'utf8').trim());
    if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && alive(holder))
      throw new SpoolLockedError(`the spool in ${dir} is in use by process ${holder}`);
    if (statSync(path).isFile()) unlinkSync(path);
  }
  throw new SpoolLockedError(`could not lock the spool in ${dir}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** fsyncs a directory: the names created or removed in it reach the disk. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
