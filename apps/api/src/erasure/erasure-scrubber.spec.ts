import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { DatabaseLocator, ErasureResidueRepository } from '@app/database';
import { ErasureScrubber, SCRUB_DELAY_MS, SCRUB_OWED_FILE } from './erasure-scrubber';

/** When and how the tables an erasure changed are scrubbed (docs/contract.md §17), over a stub repository. */
describe('ErasureScrubber', () => {
  let dataDir: string;
  let errors: jest.SpyInstance;
  beforeEach(() => {
    jest.useFakeTimers();
    dataDir = mkdtempSync(join(tmpdir(), 'scrubber-'));
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function setup(embeddedDatabase: boolean, rewrite: () => Promise<number> = () => Promise.resolve(1)) {
    const residue = { vacuum: jest.fn(() => Promise.resolve()), rewrite: jest.fn(rewrite) };
    const sut = new ErasureScrubber(
      residue as unknown as ErasureResidueRepository,
      { embeddedDatabase } as DatabaseLocator,
      Object.assign(new AppConfig(), { dataDir }),
    );
    return { sut, residue, owed: () => existsSync(join(dataDir, SCRUB_OWED_FILE)) };
  }

  it('on PostgreSQL, vacuums once for the erasures of a burst, SCRUB_DELAY_MS after the first, and never rewrites', async () => {
    const { sut, residue, owed } = setup(false);
    sut.afterErasure();
    await jest.advanceTimersByTimeAsync(SCRUB_DELAY_MS - 1);
    sut.afterErasure();
    expect(residue.vacuum).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(residue.vacuum).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(10 * SCRUB_DELAY_MS);
    expect(residue.vacuum).toHaveBeenCalledTimes(1);
    expect(residue.rewrite).not.toHaveBeenCalled();
    expect(owed()).toBe(false);
  });

  it('on the embedded database, notes the scrub owed in DATA_DIR (owner only) and rewrites within the delay', async () => {
    const { sut, residue, owed } = setup(true);
    sut.afterErasure();
    expect(owed()).toBe(true);
    expect(statSync(join(dataDir, SCRUB_OWED_FILE)).mode & 0o777).toBe(0o600);
    await jest.advanceTimersByTimeAsync(SCRUB_DELAY_MS);
    expect(residue.rewrite).toHaveBeenCalledTimes(1);
    expect(residue.vacuum).not.toHaveBeenCalled();
    expect(owed()).toBe(false);
  });

  it('scrubs again after a scrub that an erasure committed during, and keeps the note until then', async () => {
    let finish: (switches: number) => void = () => undefined;
    const { sut, residue, owed } = setup(true, () => new Promise((resolve) => (finish = resolve)));
    sut.afterErasure();
    await jest.advanceTimersByTimeAsync(SCRUB_DELAY_MS);
    sut.afterErasure();
    finish(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(owed()).toBe(true);
    await jest.advanceTimersByTimeAsync(SCRUB_DELAY_MS);
    expect(residue.rewrite).toHaveBeenCalledTimes(2);
    finish(1);
    await jest.advanceTimersByTimeAsync(0);
    expect(owed()).toBe(false);
  });

  it('does an owed scrub at shutdown on the embedded database without waiting for the delay', async () => {
    const { sut, residue, owed } = setup(true);
    sut.afterErasure();
    await sut.beforeApplicationShutdown();
    expect(residue.rewrite).toHaveBeenCalledTimes(1);
    expect(owed()).toBe(false);
    sut.afterErasure();
    await jest.advanceTimersByTimeAsync(10 * SCRUB_DELAY_MS);
    expect(residue.rewrite).toHaveBeenCalledTimes(1); // stopping: the next start makes it up
    expect(owed()).toBe(true);
  });

  it('leaves an owed VACUUM to autovacuum at shutdown on PostgreSQL', async () => {
    const { sut, residue } = setup(false);
    sut.afterErasure();
    await sut.beforeApplicationShutdown();
    await jest.advanceTimersByTimeAsync(10 * SCRUB_DELAY_MS);
    expect(residue.vacuum).not.toHaveBeenCalled();
  });

  it('makes up at start a scrub that a kill interrupted, and keeps the note after a failed one', async () => {
    writeFileSync(join(dataDir, SCRUB_OWED_FILE), '');
    const { sut, residue, owed } = setup(true, () => Promise.reject(new Error('disk full')));
    sut.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(SCRUB_DELAY_MS);
    expect(residue.rewrite).toHaveBeenCalledTimes(1);
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('disk full'));
    expect(owed()).toBe(true);
  });
});
