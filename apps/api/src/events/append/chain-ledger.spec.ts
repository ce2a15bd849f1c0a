import {
  ChainHeadsRepository,
  ChainRecord,
  Db,
  EventRecord,
  EventWritesRepository,
  IdempotencyKeysRepository,
  TransactionRunner,
} from '@app/database';
import { GENESIS_HASH } from '@app/hashing';
import { AppendRequest } from './append-request';
import { ChainLedger } from './chain-ledger';
import { ChainTrees } from './chain-trees';

const request = (chainName: string): AppendRequest => ({
  accountId: 'acc_1',
  chainName,
  actor: 'alice',
  action: 'doc.update',
  resource: null,
  context: null,
  idempotency: null,
});

/** A ChainLedger on repositories that record what it asks, with the events' insert left pending. */
function setup() {
  const calls: string[] = [];
  let settleInsert!: { resolve: () => void; reject: (error: Error) => void };
  const chains = {
    createMissing: () => Promise.resolve(void calls.push('createMissing')),
    lockHeads: (wanted: { accountId: string; name: string }[]): Promise<ChainRecord[]> => {
      calls.push('lockHeads');
      return Promise.resolve(
        wanted.map(({ accountId, name }): ChainRecord => ({
          id: `chn_${name}`,
          accountId,
          name,
          hashVersion: 2,
          lastPosition: 0,
          lastHash: GENESIS_HASH,
          lastTimestamp: null,
          createdAt: new Date(),
          firstPosition: 1,
          prunedHash: null,
          prunedTimestamp: null,
        })),
      );
    },
    moveHeads: () => Promise.resolve(void calls.push('moveHeads')),
  } as unknown as ChainHeadsRepository;
  const events = {
    insertMany: (rows: EventRecord[]) => {
      calls.push(`insertMany ${rows.length}`);
      return new Promise<void>((resolve, reject) => (settleInsert = { resolve, reject }));
    },
  } as unknown as EventWritesRepository;
  const trees = {
    grow: (rows: EventRecord[]) => {
      calls.push(`grow ${rows.length}`);
      return Promise.resolve(null);
    },
  } as unknown as ChainTrees;
  const idempotencyKeys = {
    lockClaims: () => Promise.resolve(new Set<string>()),
    storeResponses: () => Promise.resolve(),
  } as unknown as IdempotencyKeysRepository;
  const transactions = { run: <T>(work: (tx: Db) => Promise<T>) => work({} as Db) } as unknown as TransactionRunner;
  const sut = new ChainLedger(transactions, chains, events, idempotencyKeys, trees);
  return { sut, calls, insert: () => settleInsert };
}

/** Until `calls` holds `entry` (the ledger's steps are asynchronous). */
async function reached(calls: string[], entry: string): Promise<void> {
  for (let turn = 0; turn < 50 && !calls.includes(entry); turn++) await new Promise((r) => setImmediate(r));
  expect(calls).toContain(entry);
}

describe('ChainLedger', () => {
  it('grows the trees while the events are being inserted, and moves the heads once both are done', async () => {
    const { sut, calls, insert } = setup();
    const appended = sut.append([request('a'), request('b'), request('a')]);
    await reached(calls, 'grow 3');
    expect(calls).toEqual(['createMissing', 'lockHeads', 'insertMany 3', 'grow 3']);
    insert().resolve();
    const results = await appended;
    expect(calls).toEqual(['createMissing', 'lockHeads', 'insertMany 3', 'grow 3', 'moveHeads']);
    expect(results.map((r) => ('event' in r ? `${r.event.chainName}/${r.event.position}` : r))).toEqual([
      'a/1',
      'b/1',
      'a/2',
    ]);
  });

  it('fails with the insert’s error when the insert fails after the trees grew, and moves no head', async () => {
    const { sut, calls, insert } = setup();
    const appended = sut.append([request('a')]);
    await reached(calls, 'grow 1');
    insert().reject(new Error('duplicate key value violates unique constraint "uq_events_chain_position"'));
    await expect(appended).rejects.toThrow('uq_events_chain_position');
    expect(calls).not.toContain('moveHeads');
  });
});
