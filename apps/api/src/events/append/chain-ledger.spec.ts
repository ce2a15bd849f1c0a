import { AppError } from '@app/common';
import {
  accountKey,
  ChainHeadsRepository,
  ChainRecord,
  Db,
  EventRecord,
  EventWritesRepository,
  IdempotencyKeyRecord,
  IdempotencyKeysRepository,
  TransactionRunner,
} from '@app/database';
import { GENESIS_HASH } from '@app/hashing';
import { Appended, AppendRequest, Replay } from './append-request';
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

/**
 * A ChainLedger on repositories that record what it asks, with the events' insert left pending.
 * `keys`: what lockKeys finds, by accountKey (a key absent is held by another transaction).
 */
function setup(keys = new Map<string, IdempotencyKeyRecord | null>()) {
  const stored: unknown[] = [];
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
    lockKeys: (wanted: { accountId: string; key: string }[]) => {
      if (wanted.length > 0) calls.push(`lockKeys ${wanted.map((w) => w.key).join(',')}`);
      const ids = wanted.map((w) => accountKey(w.accountId, w.key));
      return Promise.resolve(new Map([...keys].filter(([id]) => ids.includes(id))));
    },
    store: (answers: unknown[]) => Promise.resolve(void stored.push(...answers)),
  } as unknown as IdempotencyKeysRepository;
  const transactions = { run: <T>(work: (tx: Db) => Promise<T>) => work({} as Db) } as unknown as TransactionRunner;
  const sut = new ChainLedger(transactions, chains, events, idempotencyKeys, trees);
  return { sut, calls, stored, insert: () => settleInsert };
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

  it('appends only under the Idempotency-Keys its transaction locked and found free; the others get 409, their replay or 422', async () => {
    const keyed = (key: string, digest: string, chainName = 'k'): AppendRequest => ({
      ...request(chainName),
      idempotency: { key, digest, respond: (events) => `answer of ${events.map((e) => e.position).join(',')}` },
    });
    const id = (key: string) => accountKey('acc_1', key);
    const { sut, calls, stored, insert } = setup(
      new Map<string, IdempotencyKeyRecord | null>([
        [id('free'), null],
        [id('left-by-an-earlier-version'), { requestDigest: 'd', response: null }],
        [id('answered'), { requestDigest: 'd', response: '{"data":"first"}' }],
        [id('answered-other-body'), { requestDigest: 'other', response: '{"data":"first"}' }],
      ]),
    );
    const free = keyed('free', 'd');
    const twice = keyed('free', 'd');
    const appended = sut.append([
      free,
      keyed('held-elsewhere', 'd'),
      keyed('answered', 'd'),
      keyed('answered-other-body', 'd'),
      twice,
      keyed('left-by-an-earlier-version', 'd'),
      request('k'),
    ]);
    await reached(calls, 'grow 3');
    expect(calls[0]).toBe('lockKeys free,held-elsewhere,answered,answered-other-body,left-by-an-earlier-version');
    insert().resolve();
    const results = await appended;
    const shown = results.map((r: Appended | Replay | AppError) =>
      r instanceof AppError ? r.code : r instanceof Replay ? `replay ${r.json}` : `k/${r.event.position}`,
    );
    expect(shown).toEqual([
      'k/1',
      'IDEMPOTENCY_IN_PROGRESS',
      'replay {"data":"first"}',
      'IDEMPOTENCY_KEY_REUSED',
      'IDEMPOTENCY_IN_PROGRESS',
      'k/2',
      'k/3',
    ]);
    expect(stored).toEqual([
      { accountId: 'acc_1', key: 'free', requestDigest: 'd', response: 'answer of 1' },
      { accountId: 'acc_1', key: 'left-by-an-earlier-version', requestDigest: 'd', response: 'answer of 2' },
    ]);
  });
});
