import {
  accountKey,
  ChainHeadsRepository,
  Db,
  EventRecord,
  EventWritesRepository,
  IdempotencyKeyRecord,
  IdempotencyKeysRepository,
  LockedChainHead,
  TransactionRunner,
} from '@app/database';
import { GENESIS_HASH } from '@app/hashing';
import { AppendRequest } from './append-request';
import { ChainLedger } from './chain-ledger';
import { ChainTrees } from './chain-trees';

/** An event of account acc_1 to `chainName`. For specs only (a fixture, left out of builds). */
export const request = (chainName: string, actor = 'alice'): AppendRequest => ({
  accountId: 'acc_1',
  chainName,
  actor,
  action: 'doc.update',
  resource: null,
  context: null,
});

/**
 * A real ChainLedger (its positions, timestamps and hashes) on repositories that record what it
 * asks, in `calls`, with the events' insert left pending until `insert()` settles it. Every chain
 * is new (version-2 hashes). `keys`: what IdempotencyKeysRepository.lockKeys finds, by accountKey (a
 * key absent is held by another transaction); `stored`: the answers stored; `schemaGenerations`:
 * each account's action schema generation read with its heads' locks (0 when absent).
 */
export function recordingLedger(
  keys = new Map<string, IdempotencyKeyRecord | null>(),
  schemaGenerations = new Map<string, number>(),
) {
  const stored: unknown[] = [];
  const calls: string[] = [];
  let settleInsert!: { resolve: () => void; reject: (error: Error) => void };
  const chains = {
    createMissing: () => Promise.resolve(void calls.push('createMissing')),
    lockHeads: (wanted: { accountId: string; name: string }[]): Promise<LockedChainHead[]> => {
      calls.push('lockHeads');
      return Promise.resolve(
        wanted.map(({ accountId, name }): LockedChainHead => ({
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
          schemaGeneration: schemaGenerations.get(accountId) ?? 0,
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
    lockKeys: (wanted: { accountId: string; key: string }[]) => {
      calls.push(`lockKeys ${wanted.map((w) => w.key).join(',')}`);
      const ids = wanted.map((w) => accountKey(w.accountId, w.key));
      return Promise.resolve(new Map([...keys].filter(([id]) => ids.includes(id))));
    },
    store: (answers: unknown[]) => {
      if (answers.length > 0) calls.push(`store ${answers.length}`);
      return Promise.resolve(void stored.push(...answers));
    },
  } as unknown as IdempotencyKeysRepository;
  const transactions = {
    run: <T>(work: (tx: Db) => Promise<T>) => {
      calls.push('begin');
      return work({} as Db).then(
        (result) => (calls.push('commit'), result),
        (error: unknown) => {
          calls.push('rollback');
          throw error;
        },
      );
    },
  } as unknown as TransactionRunner;
  const ledger = new ChainLedger(transactions, chains, events, trees);
  return { ledger, idempotencyKeys, calls, stored, insert: () => settleInsert };
}

/** Until `calls` holds `entry` (the ledger's steps are asynchronous). */
export async function reached(calls: string[], entry: string): Promise<void> {
  for (let turn = 0; turn < 50 && !calls.includes(entry); turn++) await new Promise((r) => setImmediate(r));
  expect(calls).toContain(entry);
}
