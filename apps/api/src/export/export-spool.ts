import { randomUUID } from 'node:crypto';
import { close, createReadStream, createWriteStream, mkdirSync, open, rmSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';

/**
 * Where an export waits for its client when the database has one connection (the embedded
 * default): holding that connection while a client reads would stop every append, and holding the
 * file in memory costs its size per export (up to hundreds of MB). So the snapshot is read out at
 * database speed into a file of mode 0600 in `<DATA_DIR>/export-spool` (0700), the snapshot closed,
 * and the file sent from disk. The file is unlinked as soon as it is written: the open descriptor
 * alone keeps it, so it is gone from the disk whatever way the export ends, the process's death
 * included. A file left by a crash between its creation and its unlinking is removed at start.
 */
export class ExportSpool {
  private readonly dir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'export-spool');
  }

  /** Removes what a process that died mid-spool left. */
  clear(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /**
   * Writes `text` to a new spool file and returns a stream of it; the stream closes the file when it
   * ends or is destroyed. (Plain descriptors: a FileHandle written by a stream with autoClose off
   * is never closed by the stream that reads it afterwards.)
   */
  async spool(text: Readable): Promise<Readable> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const path = join(this.dir, `${randomUUID()}.part`);
    const fd = await promisify(open)(path, 'wx+', 0o600);
    try {
      await pipeline(text, createWriteStream('', { fd, autoClose: false }));
    } catch (error) {
      close(fd, () => undefined);
      throw error;
    } finally {
      await unlink(path).catch(() => undefined); // then the next start removes it
    }
    return createReadStream('', { fd, start: 0 });
  }
}
