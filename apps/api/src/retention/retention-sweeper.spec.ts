import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AppConfig,
  PRUNE_BATCH_MAX_EVENTS,
  PRUNE_BATCH_MILLISECONDS,
  PRUNE_BATCH_MIN_EVENTS,
  VACUUM_FULL_LOCK_WAIT_MILLISECONDS,
  VACUUM_FULL_MAX_RETAINED_EVENTS,
  VACUUM_FULL_MAX_TABLE_BYTES,
} from '@app/common';
import {
  ChainRetentionRepository,
  CheckpointsRepository,
  MaintenanceRepository,
  PrunedTable,
  TransactionRunner,
  VacuumOptions,
} from '@app/database';
import { CheckpointsService } from '../checkpoints/checkpoints.service';
import { StreamGaps } from '../streams/delivery/stream-gaps';
import { RetentionAudit } from './retention-audit';
import { nextBatchSize, pauseAfter, RetentionSweeper, vacuumFullPays } from './retention-sweeper';

jest.mock('node:timers/promises', () => ({ setTimeout: jest.fn(() => Promise.resolve()) }));
const pauses = sleep as unknown as jest.Mock;

/** The sweep's order of work, over stubs: sign first, batches bounded by the signed size, one audit entry per prune. */
describe('RetentionSweeper', () => {
  /** The batches' outcomes: events deleted, how long the batch waited for the chain's lock and then held it (ms, on a fake clock). */
  interface Batch {
    deleted: number;
    ms?: number;
    waited?: number;
    /** The batch's statement fails (the database went away, say). */
    fails?: boolean;
  }

  let clock = 0;
  beforeEach(() => {
    clock = 0;
    pauses.mockClear();
    jest.spyOn(performance, 'now').mockImplementation(() => clock);
  });
  afterEach(() => jest.restoreAllMocks());

  function setup(
    batches: Batch[],
    {
      retentionVacuum = 'plain',
      retained = 0,
      vacuumFails = null,
      committing = () => undefined,
    }: {
      retentionVacuum?: AppConfig['retentionVacuum'];
      retained?: number;
      vacuumFails?: string | null;
      /** Called while each transaction commits, after its work (a shutdown arriving then, say). */
      committing?: (sut: RetentionSweeper) => void;
    } = {},
  ) {
    const calls: string[] = [];
    let next = 1;
    const chains = {
      prunable: () => Promise.resolve([{ id: 'chn_a', accountId: 'acc_a', retentionDays: 30 }]),
      lockForPrune: () => {
        clock += batches[0]?.waited ?? 0;
        return Promise.resolve();
      },
      pruneBatch: (_chain: string, upTo: number, max: number, offset: number) => {
        const { deleted, ms = 1, fails = false } = batches.shift() ?? { deleted: 0 };
        clock += ms;
        if (fails) {
          calls.push(`batch max=${max} fails`);
          return Promise.reject(new Error('connection terminated'));
        }
        calls.push(`batch upTo=${upTo} max=${max} offset=${offset} -> ${deleted}`);
        const from = next;
        next += deleted;
        return Promise.resolve({ deleted, from, to: next - 1 });
      },
    } as unknown as ChainRetentionRepository;
    const checkpoints = {
      latest: () => {
        calls.push('sign');
        return Promise.resolve('note');
      },
    } as unknown as CheckpointsService;
    const rows = { findLatest: () => Promise.resolve({ size: 5000, hash: '', keyId: '', note: '' }) };
    const transactions = {
      run: async (work: (tx: object) => Promise<unknown>) => {
        const result = await work({});
        committing(sut);
        return result;
      },
    } as unknown as TransactionRunner;
    const maintenance = {
      storageBytes: () => Promise.resolve(1),
      analyzedRows: () => Promise.resolve(retained),
      vacuum: (table: PrunedTable, { full, lockWaitMilliseconds }: VacuumOptions) => {
        calls.push(
          `vacuum ${table}${full ? ' full' : ''}${lockWaitMilliseconds === null ? '' : ` wait=${lockWaitMilliseconds}`}`,
        );
        return full && vacuumFails
          ? Promise.reject(Object.assign(new Error('lock'), { code: vacuumFails }))
          : Promise.resolve();
      },
    };
    const audit = {
      pruned: (_account: string, chainId: string, change: object) => {
        calls.push(`audit ${chainId} ${JSON.stringify(change)}`);
        return Promise.resolve();
      },
    } as unknown as RetentionAudit;
    const config = Object.assign(new AppConfig(), { retentionClockOffsetSeconds: 7, retentionVacuum });
    // No stream destination: nothing a prune could take from one (test/stream-delivery.e2e-spec.ts has that).
    const noDestinations = {
      beforePrune: (accountId: string, chainId: string) => Promise.resolve({ accountId, chainId, undelivered: [] }),
      afterPrune: () => Promise.resolve(),
    } as unknown as StreamGaps;
    const sut = new RetentionSweeper(
      config,
      transactions,
      chains,
      rows as unknown as CheckpointsRepository,
      maintenance as unknown as MaintenanceRepository,
      checkpoints,
      audit,
      noDestinations,
    );
    return { sut, calls };
  }

  const MIN = PRUNE_BATCH_MIN_EVENTS;

  it('signs the head, prunes batch after batch up to the signed size, records one entry, then vacuums', async () => {
    const { sut, calls } = setup([{ deleted: MIN }, { deleted: 2 * MIN }, { deleted: 50 }]);
    expect(await sut.sweep(null)).toEqual({ chains: 1, events: 3 * MIN + 50 });
    const batch = (max: number, deleted: number) => `batch upTo=5000 max=${max} offset=7 -> ${deleted}`;
    expect(calls).toEqual([
      'sign',
      batch(MIN, MIN),
      batch(2 * MIN, 2 * MIN),
      batch(4 * MIN, 50),
      `audit chn_a {"firstPrunedPosition":1,"lastPrunedPosition":${3 * MIN + 50},"reason":"older than the retention of 30 day(s)"}`,
      'vacuum events',
      'vacuum merkle_nodes',
    ]);
  });

  it('sizes each batch from how long the last one held the chain’s lock and pauses half that after it, not after the last', async () => {
    const { sut, calls } = setup([
      { deleted: MIN, ms: 5 }, // quick: the next one twice as big, no more
      { deleted: 2 * MIN, ms: 4 * PRUNE_BATCH_MILLISECONDS }, // four times too long: a quarter of it
      { deleted: MIN, ms: PRUNE_BATCH_MILLISECONDS, waited: 500 }, // on target once it had the lock: the same again
      { deleted: MIN, ms: 40 },
      { deleted: 3, ms: 1 },
    ]);
    await sut.sweep(null);
    expect(calls.filter((c) => c.startsWith('batch')).map((c) => Number(/max=(\d+)/.exec(c)![1]))).toEqual([
      MIN,
      2 * MIN,
      MIN,
      MIN,
      Math.max(MIN, Math.floor((MIN * PRUNE_BATCH_MILLISECONDS) / 40)),
    ]);
    const paused = pauses.mock.calls.map(([ms]) => ms as number);
    expect(paused).toHaveLength(4);
    [5, 4 * PRUNE_BATCH_MILLISECONDS, PRUNE_BATCH_MILLISECONDS, 40].forEach((held, i) =>
      expect(paused[i]).toBeCloseTo(held / 2),
    );
  });

  it('nextBatchSize aims at PRUNE_BATCH_MILLISECONDS, at most doubling, within its bounds; pauseAfter is half the hold', () => {
    expect(nextBatchSize(1000, PRUNE_BATCH_MILLISECONDS / 2)).toBe(2000);
    expect(nextBatchSize(1000, PRUNE_BATCH_MILLISECONDS / 4)).toBe(2000);
    expect(nextBatchSize(1000, 2 * PRUNE_BATCH_MILLISECONDS)).toBe(500);
    expect(nextBatchSize(PRUNE_BATCH_MAX_EVENTS, 0)).toBe(PRUNE_BATCH_MAX_EVENTS);
    expect(nextBatchSize(MIN, 1000 * PRUNE_BATCH_MILLISECONDS)).toBe(MIN);
    expect(pauseAfter(30)).toBeCloseTo(15);
  });

  it('records nothing and vacuums nothing when nothing was old enough', async () => {
    const { sut, calls } = setup([{ deleted: 0 }]);
    expect(await sut.sweep(null)).toEqual({ chains: 0, events: 0 });
    expect(calls).toEqual(['sign', `batch upTo=5000 max=${MIN} offset=7 -> 0`]);
  });

  it('a prefix that ends on a batch boundary is recorded by the empty batch that finds the end', async () => {
    const { sut, calls } = setup([{ deleted: MIN }, { deleted: 0 }]);
    await sut.sweep(null);
    expect(calls.filter((c) => c.startsWith('audit'))).toEqual([
      `audit chn_a {"firstPrunedPosition":1,"lastPrunedPosition":${MIN},"reason":"older than the retention of 30 day(s)"}`,
    ]);
  });

  it('a shutdown that arrives while a batch commits ends the prune one batch later, recorded', async () => {
    let stops = 0;
    const { sut, calls } = setup([{ deleted: MIN }, { deleted: 2 * MIN }, { deleted: 4 * MIN }], {
      committing: (sweeper) => {
        if (stops++ === 0) void sweeper.onApplicationShutdown();
      },
    });
    expect(await sut.sweep(null)).toEqual({ chains: 1, events: 3 * MIN });
    expect(calls.filter((c) => c.startsWith('batch') || c.startsWith('audit'))).toEqual([
      `batch upTo=5000 max=${MIN} offset=7 -> ${MIN}`,
      `batch upTo=5000 max=${2 * MIN} offset=7 -> ${2 * MIN}`,
      `audit chn_a {"firstPrunedPosition":1,"lastPrunedPosition":${3 * MIN},"reason":"older than the retention of 30 day(s)"}`,
    ]);
  });

  it('a batch that fails after others committed: theirs are recorded in a transaction of their own, then the error goes on', async () => {
    const { sut, calls } = setup([{ deleted: MIN }, { deleted: 2 * MIN }, { deleted: 0, fails: true }]);
    await expect(sut.sweep(null)).rejects.toThrow('connection terminated');
    expect(calls.filter((c) => c.startsWith('batch') || c.startsWith('audit'))).toEqual([
      `batch upTo=5000 max=${MIN} offset=7 -> ${MIN}`,
      `batch upTo=5000 max=${2 * MIN} offset=7 -> ${2 * MIN}`,
      `batch max=${4 * MIN} fails`,
      `audit chn_a {"firstPrunedPosition":1,"lastPrunedPosition":${3 * MIN},"reason":"older than the retention of 30 day(s)"}`,
    ]);
  });

  it('vacuumFullPays: only when what remains is small next to what was deleted, and the rewrite is short', () => {
    const GB = 1024 ** 3;
    expect(vacuumFullPays(1_000_000, 3_000, 1.3 * GB)).toBe(true);
    expect(vacuumFullPays(100_000, 25_000, 0.2 * GB)).toBe(true);
    expect(vacuumFullPays(100_000, 25_001, 0.2 * GB)).toBe(false); // more than a quarter remains
    expect(vacuumFullPays(1_000_000, 250_000, 1.3 * GB)).toBe(false); // a quarter, but too much to copy under the lock
    expect(vacuumFullPays(100 * VACUUM_FULL_MAX_RETAINED_EVENTS, VACUUM_FULL_MAX_RETAINED_EVENTS + 1, GB)).toBe(false);
    expect(vacuumFullPays(10_000_000, 3_000, VACUUM_FULL_MAX_TABLE_BYTES + 1)).toBe(false); // too much to read under the lock
  });

  it('RETENTION_VACUUM=auto: FULL with a bounded wait for its lock when little remains, plain otherwise', async () => {
    const little = setup([{ deleted: 50 }], { retentionVacuum: 'auto', retained: 10 });
    await little.sut.sweep(null);
    const wait = `wait=${VACUUM_FULL_LOCK_WAIT_MILLISECONDS}`;
    expect(little.calls.filter((c) => c.startsWith('vacuum'))).toEqual([
      `vacuum events full ${wait}`,
      `vacuum merkle_nodes full ${wait}`,
    ]);
    const much = setup([{ deleted: 50 }], { retentionVacuum: 'auto', retained: 1000 });
    await much.sut.sweep(null);
    expect(much.calls.filter((c) => c.startsWith('vacuum'))).toEqual(['vacuum events', 'vacuum merkle_nodes']);
  });

  it('RETENTION_VACUUM=auto: a FULL whose lock does not come in time runs plain; other errors are errors', async () => {
    const locked = setup([{ deleted: 50 }], { retentionVacuum: 'auto', vacuumFails: '55P03' });
    await locked.sut.sweep(null);
    const wait = `wait=${VACUUM_FULL_LOCK_WAIT_MILLISECONDS}`;
    expect(locked.calls.filter((c) => c.startsWith('vacuum'))).toEqual([
      `vacuum events full ${wait}`,
      'vacuum events',
      `vacuum merkle_nodes full ${wait}`,
      'vacuum merkle_nodes',
    ]);
    const broken = setup([{ deleted: 50 }], { retentionVacuum: 'auto', vacuumFails: '57014' });
    await expect(broken.sut.sweep(null)).rejects.toThrow('lock');
  });

  it('RETENTION_VACUUM: full runs VACUUM FULL whatever remains, waiting for its lock; off none', async () => {
    const full = setup([{ deleted: 50 }], { retentionVacuum: 'full', retained: 1_000_000 });
    await full.sut.sweep(null);
    expect(full.calls.filter((c) => c.startsWith('vacuum'))).toEqual([
      'vacuum events full',
      'vacuum merkle_nodes full',
    ]);
    const off = setup([{ deleted: 50 }], { retentionVacuum: 'off' });
    await off.sut.sweep(null);
    expect(off.calls.filter((c) => c.startsWith('vacuum'))).toEqual([]);
  });
});
