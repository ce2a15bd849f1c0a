import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The last checkpoint this client verified, per chain, as the signed note itself (immudb's clients
 * keep their trusted state the same way): `<trustDir>/<chainId>.checkpoint`, replaced atomically
 * (written beside, fsynced, renamed). Whoever reads it verifies its signature again: the file is
 * a cache of something signed, not a trust anchor of its own.
 */
export class TrustStore {
  constructor(private readonly dir: string) {}

  async read(chainId: string): Promise<string | null> {
    try {
      return await readFile(this.path(chainId), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async write(chainId: string, note: string): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temp = `${this.path(chainId)}.${randomBytes(6).toString('hex')}.tmp`;
    const file = await open(temp, 'w', 0o600);
    try {
      await file.writeFile(note, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, this.path(chainId));
  }

  private path(chainId: string): string {
    if (!/^chn_[0-9A-Z]{26}$/.test(chainId)) throw new TypeError(`not a chain id: ${chainId}`);
    return join(this.dir, `${chainId}.checkpoint`);
  }
}

/** One verification at a time per chain and store, within this process: two never race to replace a trusted checkpoint. */
const chainLocks = new Map<string, Promise<unknown>>();

export async function withChainLock<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = chainLocks.get(key) ?? Promise.resolve();
  const run = before.then(work, work);
  const tail = run.catch(() => undefined);
  chainLocks.set(key, tail);
  try {
    return await run;
  } finally {
    if (chainLocks.get(key) === tail) chainLocks.delete(key);
  }
}
