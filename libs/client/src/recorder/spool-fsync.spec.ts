import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventLine } from './spool-format';
import { FsyncMode, Spool } from './spool';

/**
 * The spool's fsync modes: when appends resolve and how many fdatasyncs they cost (the header of
 * each new file is one), and that what was written is read back by the next open in each mode.
 */
describe('the spool’s fsync modes', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'spool-fsync-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function appendRounds(mode: FsyncMode, fsyncIntervalMs?: number) {
    const { spool } = await Spool.open({ dir, fsync: mode, fsyncIntervalMs }, () => 0);
    const afterOpen = spool.syncs;
    for (let round = 0; round < 5; round++)
      await Promise.all(
        [0, 1, 2].map((i) => spool.append(eventLine(round * 3 + i, '{"actor":"a","action":"x.y"}'), round * 2 + i)),
      );
    return { spool, afterOpen, afterAppends: spool.syncs };
  }

  async function reopened(spool: Spool): Promise<number> {
    // Not closed first (as after kill -9): the lock of this same process is taken over.
    const { spool: next, recovered } = await Spool.open({ dir }, () => 0);
    await next.close();
    await spool.close();
    return recovered.unsent.length;
  }

  it('batch (the default): one fdatasync per group commit, before the appends resolve', async () => {
    const { spool, afterOpen, afterAppends } = await appendRounds('batch');
    expect(afterOpen).toBe(1);
    // Three appends at once: the first is written alone, the two asked for meanwhile together.
    expect(afterAppends).toBe(1 + 5 * 2);
    expect(await reopened(spool)).toBe(15);
  });

  it('interval: appends resolve once written; an fdatasync every fsyncIntervalMs while something is unsynced', async () => {
    const { spool, afterOpen, afterAppends } = await appendRounds('interval', 50);
    expect(afterAppends).toBe(afterOpen);
    await new Promise((resolve) => setTimeout(resolve, 160));
    expect(spool.syncs).toBe(afterOpen + 1); // one for what was written; none while nothing more is
    expect(await reopened(spool)).toBe(15);
  });

  it('none: no fdatasync for appends (one at close)', async () => {
    const { spool, afterOpen, afterAppends } = await appendRounds('none');
    expect(afterAppends).toBe(afterOpen);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(spool.syncs).toBe(afterOpen);
    expect(await reopened(spool)).toBe(15);
    expect(spool.syncs).toBe(afterOpen + 1);
  });

  it('refuses an unknown mode', async () => {
    await expect(Spool.open({ dir, fsync: 'sometimes' as FsyncMode }, () => 0)).rejects.toThrow(TypeError);
  });
});
