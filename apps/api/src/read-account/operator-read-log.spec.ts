import { AuditEntry, AuditTrail, Db, OperatorReadsRepository, TransactionRunner } from '@app/database';
import { OPERATOR_READ_INTERVAL_MS, OperatorReadLog } from './operator-read-log';

/** The `_audit` chains as the fakes keep them: entries with their times, by account. */
type Chains = Map<string, (AuditEntry & { at: number })[]>;

/** A database of the fakes: what a transaction reads is what the ones before it committed. */
function fakeDatabase(chains: Chains, fail: { next: boolean }) {
  let transactions = 0;
  const tx = {} as Db;
  const runner = {
    run: async <T>(work: (db: Db) => Promise<T>): Promise<T> => {
      transactions++;
      if (fail.next) {
        fail.next = false;
        throw new Error('connection lost');
      }
      return work(tx);
    },
  } as unknown as TransactionRunner;
  const reads = {
    lock: () => Promise.resolve(),
    lastSince: (accountId: string, _chain: string, actor: string, action: string, since: Date) => {
      const times = (chains.get(accountId) ?? [])
        .filter((e) => e.actor === actor && e.action === action && e.at > since.getTime())
        .map((e) => e.at);
      return Promise.resolve(times.length > 0 ? new Date(Math.max(...times)) : null);
    },
  } as unknown as OperatorReadsRepository;
  const trail = {
    record: (accountId: string, entries: readonly AuditEntry[]) => {
      chains.set(accountId, [...(chains.get(accountId) ?? []), ...entries.map((e) => ({ ...e, at: Date.now() }))]);
      return Promise.resolve();
    },
  } as unknown as AuditTrail;
  return { runner, reads, trail, transactions: () => transactions };
}

describe('OperatorReadLog', () => {
  let chains: Chains;
  let fail: { next: boolean };
  let db: ReturnType<typeof fakeDatabase>;
  let sut: OperatorReadLog;
  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-12-07T12:00:00Z') });
    chains = new Map();
    fail = { next: false };
    db = fakeDatabase(chains, fail);
    sut = new OperatorReadLog(db.runner, db.reads, db.trail);
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  const entries = (accountId: string) => (chains.get(accountId) ?? []).map(({ at: _, ...entry }) => entry);

  it('records the first read as operator.read with the key and the route, in the account read', async () => {
    await sut.record('key_1', 'acc_A', 'GET /v1/events');
    expect(entries('acc_A')).toEqual([
      { actor: 'key:key_1', action: 'operator.read', resource: null, context: { route: 'GET /v1/events' } },
    ]);
  });

  it('records once an hour per key and account: a flood of reads, at once or one by one, costs one transaction', async () => {
    await Promise.all(Array.from({ length: 500 }, () => sut.record('key_1', 'acc_A', 'GET /v1/chains')));
    for (let i = 0; i < 500; i++) await sut.record('key_1', 'acc_A', 'GET /v1/events');
    expect(entries('acc_A')).toHaveLength(1);
    expect(db.transactions()).toBe(1);

    await sut.record('key_2', 'acc_A', 'GET /v1/chains');
    await sut.record('key_1', 'acc_B', 'GET /v1/chains');
    expect(entries('acc_A').map((e) => e.actor)).toEqual(['key:key_1', 'key:key_2']);
    expect(entries('acc_B')).toHaveLength(1);
  });

  it('records again once the hour has passed, not before', async () => {
    await sut.record('key_1', 'acc_A', 'GET /v1/chains');
    jest.setSystemTime(Date.now() + OPERATOR_READ_INTERVAL_MS - 1);
    await sut.record('key_1', 'acc_A', 'GET /v1/chains');
    expect(entries('acc_A')).toHaveLength(1);
    jest.setSystemTime(Date.now() + 1);
    await sut.record('key_1', 'acc_A', 'GET /v1/events/:id');
    expect(entries('acc_A').map((e) => e.context)).toEqual([
      { route: 'GET /v1/chains' },
      { route: 'GET /v1/events/:id' },
    ]);
  });

  it('asks the database, not its memory, whether another instance recorded the hour already', async () => {
    const other = new OperatorReadLog(db.runner, db.reads, db.trail);
    await other.record('key_1', 'acc_A', 'GET /v1/chains');
    jest.setSystemTime(Date.now() + 30 * 60 * 1000);
    await sut.record('key_1', 'acc_A', 'GET /v1/chains');
    expect(entries('acc_A')).toHaveLength(1);
    // It remembers the entry's own time: the next hour starts from it, not from when it asked.
    jest.setSystemTime(Date.now() + 30 * 60 * 1000);
    await sut.record('key_1', 'acc_A', 'GET /v1/chains');
    expect(entries('acc_A')).toHaveLength(2);
  });

  it('fails the read when the entry cannot be written, and tries again on the next one', async () => {
    fail.next = true;
    await expect(sut.record('key_1', 'acc_A', 'GET /v1/chains')).rejects.toThrow('connection lost');
    expect(entries('acc_A')).toEqual([]);
    await sut.record('key_1', 'acc_A', 'GET /v1/chains');
    expect(entries('acc_A')).toHaveLength(1);
  });
});
