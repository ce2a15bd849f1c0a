import { AppConfig, PRUNE_BATCH_EVENTS } from '@app/common';
import {
  ChainsRepository,
  CheckpointsRepository,
  EventsRepository,
  MerkleNodesRepository,
  TransactionRunner,
} from '@app/database';
import { CheckpointsService } from '../checkpoints/checkpoints.service';
import { RetentionAudit } from './retention-audit';
import { RetentionSweeper } from './retention-sweeper';

/** The sweep's order of work, over stubs: sign first, batches bounded by the signed size, one audit entry per prune. */
describe('RetentionSweeper', () => {
  function setup(batches: number[], retentionVacuum: AppConfig['retentionVacuum'] = 'plain') {
    const calls: string[] = [];
    let next = 1;
    const chains = {
      prunable: () => Promise.resolve([{ id: 'chn_a', accountId: 'acc_a', retentionDays: 30 }]),
      pruneBatch: (_chain: string, upTo: number, max: number, offset: number) => {
        const deleted = batches.shift() ?? 0;
        calls.push(`batch upTo=${upTo} max=${max} offset=${offset} -> ${deleted}`);
        const from = next;
        next += deleted;
        return Promise.resolve({ deleted, from, to: next - 1 });
      },
    } as unknown as ChainsRepository;
    const checkpoints = {
      latest: () => {
        calls.push('sign');
        return Promise.resolve('note');
      },
    } as unknown as CheckpointsService;
    const rows = { findLatest: () => Promise.resolve({ size: '5000', hash: '', key_id: '', note: '' }) };
    const transactions = { run: (work: (tx: object) => Promise<unknown>) => work({}) } as unknown as TransactionRunner;
    const storage = {
      storageBytes: () => Promise.resolve(1),
      vacuum: (full: boolean) => Promise.resolve(calls.push(full ? 'vacuum full' : 'vacuum')),
    };
    const audit = {
      pruned: (_account: string, chainId: string, change: object) => {
        calls.push(`audit ${chainId} ${JSON.stringify(change)}`);
        return Promise.resolve();
      },
    } as unknown as RetentionAudit;
    const config = Object.assign(new AppConfig(), { retentionClockOffsetSeconds: 7, retentionVacuum });
    const sut = new RetentionSweeper(
      config,
      transactions,
      chains,
      rows as unknown as CheckpointsRepository,
      storage as unknown as EventsRepository,
      storage as unknown as MerkleNodesRepository,
      checkpoints,
      audit,
    );
    return { sut, calls };
  }

  it('signs the head, prunes batch after batch up to the signed size, records one entry, then vacuums', async () => {
    const { sut, calls } = setup([PRUNE_BATCH_EVENTS, PRUNE_BATCH_EVENTS, 250]);
    expect(await sut.sweep(null)).toEqual({ chains: 1, events: 2 * PRUNE_BATCH_EVENTS + 250 });
    const batch = `batch upTo=5000 max=${PRUNE_BATCH_EVENTS} offset=7`;
    expect(calls).toEqual([
      'sign',
      `${batch} -> ${PRUNE_BATCH_EVENTS}`,
      `${batch} -> ${PRUNE_BATCH_EVENTS}`,
      `${batch} -> 250`,
      `audit chn_a {"firstPrunedPosition":1,"lastPrunedPosition":${2 * PRUNE_BATCH_EVENTS + 250},"reason":"older than the retention of 30 day(s)"}`,
      'vacuum',
      'vacuum',
    ]);
  });

  it('records nothing and vacuums nothing when nothing was old enough', async () => {
    const { sut, calls } = setup([0]);
    expect(await sut.sweep(null)).toEqual({ chains: 0, events: 0 });
    expect(calls).toEqual(['sign', `batch upTo=5000 max=${PRUNE_BATCH_EVENTS} offset=7 -> 0`]);
  });

  it('a prefix that ends on a batch boundary is recorded by the empty batch that finds the end', async () => {
    const { sut, calls } = setup([PRUNE_BATCH_EVENTS, 0]);
    await sut.sweep(null);
    expect(calls.filter((c) => c.startsWith('audit'))).toEqual([
      `audit chn_a {"firstPrunedPosition":1,"lastPrunedPosition":${PRUNE_BATCH_EVENTS},"reason":"older than the retention of 30 day(s)"}`,
    ]);
  });

  it('RETENTION_VACUUM: full runs VACUUM FULL, off none', async () => {
    const full = setup([250], 'full');
    await full.sut.sweep(null);
    expect(full.calls.filter((c) => c.startsWith('vacuum'))).toEqual(['vacuum full', 'vacuum full']);
    const off = setup([250], 'off');
    await off.sut.sweep(null);
    expect(off.calls.filter((c) => c.startsWith('vacuum'))).toEqual([]);
  });
});
