import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { decodeBase64 } from '@app/hashing';

/** What the witness last cosigned for one origin. */
export interface CosignedTree {
  size: number;
  /** The root hash, 32 bytes. */
  hash: Buffer;
}

interface StateFile {
  version: 1;
  /** origin → { size, hash (base64), updatedAt } */
  logs: Record<string, { size: number; hash: string; updatedAt: string }>;
}

export class StateFileError extends Error {
  override readonly name = 'StateFileError';
}

/**
 * The witness's memory: per origin, the size and root hash it last cosigned, in one JSON file.
 * Every change replaces the whole file atomically (a temporary file beside it, fsync, rename,
 * fsync of the directory) before put() resolves, and changes are written one after another, each
 * with every change before it, so a crash or a restart never rolls a log's record back.
 */
export class StateStore {
  private committed: StateFile['logs'];
  private writes: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly file: string,
    logs: StateFile['logs'],
  ) {
    this.committed = logs;
  }

  static async open(file: string): Promise<StateStore> {
    const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw new StateFileError(`cannot read WITNESS_STATE_FILE ${file}: ${error.message}`);
    });
    if (text === null) {
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      return new StateStore(file, {});
    }
    return new StateStore(file, parseState(file, text));
  }

  /** The tree last cosigned for `origin`, or null when there is none. */
  get(origin: string): CosignedTree | null {
    const entry = this.committed[origin];
    return entry ? { size: entry.size, hash: Buffer.from(entry.hash, 'base64') } : null;
  }

  /** Records `tree` for `origin`; resolves once it is on disk. */
  put(origin: string, tree: CosignedTree): Promise<void> {
    const write = this.writes.then(async () => {
      const next = {
        ...this.committed,
        [origin]: { size: tree.size, hash: tree.hash.toString('base64'), updatedAt: new Date().toISOString() },
      };
      await writeAtomically(this.file, `${JSON.stringify({ version: 1, logs: next } satisfies StateFile, null, 2)}\n`);
      this.committed = next;
    });
    this.writes = write.catch(() => undefined);
    return write;
  }
}

function parseState(file: string, text: string): StateFile['logs'] {
  const fail = (why: string): never => {
    throw new StateFileError(`WITNESS_STATE_FILE ${file} is not a witness state file (${why}); refusing to start`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail('not JSON');
  }
  const state = value as Partial<StateFile> | null;
  if (state?.version !== 1 || typeof state.logs !== 'object' || state.logs === null) return fail('no version 1 logs');
  for (const [origin, entry] of Object.entries(state.logs)) {
    const hash = typeof entry?.hash === 'string' ? decodeBase64(entry.hash) : null;
    if (!Number.isSafeInteger(entry?.size) || entry.size < 0 || hash?.length !== 32) fail(`bad entry for '${origin}'`);
  }
  return state.logs;
}

async function writeAtomically(file: string, text: string): Promise<void> {
  const temporary = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  // The rename itself is durable only once the directory is.
  const directory = await open(dirname(file), 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
