import { AppError } from '@app/common';
import { accountKey, IdempotencyKeyRecord } from '@app/database';
import { AppendRequest, StaleSchemas } from './append-request';
import { AppendUnit, IdempotentLedger, Replay, Settled } from './idempotent-ledger';
import { reached, recordingLedger, request } from './ledger.fixture';

const keyed = (key: string, digest: string, events: AppendRequest[] = [request('k')]): AppendUnit => ({
  events,
  idempotency: {
    accountId: 'acc_1',
    key,
    digest,
    respond: (written) => `answer of ${written.map((e) => `${e.chainName}/${e.position}`).join(',')}`,
  },
});
const plain = (events: AppendRequest[]): AppendUnit => ({ events, idempotency: null });
const shown = (results: Settled[]) =>
  results.map((r) =>
    r instanceof AppError
      ? r.code
      : r instanceof Replay
        ? `replay ${r.json}`
        : `${r.events.map((e) => `${e.chainName}/${e.position}`).join(',')}${r.answer === null ? '' : ` (${r.answer})`}`,
  );

function setup(keys = new Map<string, IdempotencyKeyRecord | null>(), schemaGenerations = new Map<string, number>()) {
  const recording = recordingLedger(keys, schemaGenerations);
  return { ...recording, sut: new IdempotentLedger(recording.ledger, recording.idempotencyKeys) };
}

describe('IdempotentLedger', () => {
  it('appends only under the Idempotency-Keys its transaction locked and found free; the others get 409, their replay or 422', async () => {
    const id = (key: string) => accountKey('acc_1', key);
    const { sut, calls, stored, insert } = setup(
      new Map<string, IdempotencyKeyRecord | null>([
        [id('free'), null],
        [id('left-by-an-earlier-version'), { requestDigest: 'd', response: null }],
        [id('answered'), { requestDigest: 'd', response: '{"data":"first"}' }],
        [id('answered-other-body'), { requestDigest: 'other', response: '{"data":"first"}' }],
      ]),
    );
    const appended = sut.append([
      keyed('free', 'd'),
      keyed('held-elsewhere', 'd'),
      keyed('answered', 'd'),
      keyed('answered-other-body', 'd'),
      keyed('free', 'd'),
      keyed('left-by-an-earlier-version', 'd'),
      plain([request('k')]),
    ]);
    await reached(calls, 'grow 3');
    expect(calls.slice(0, 2)).toEqual([
      'begin',
      'lockKeys free,held-elsewhere,answered,answered-other-body,left-by-an-earlier-version',
    ]);
    insert().resolve();
    expect(shown(await appended)).toEqual([
      'k/1 (answer of k/1)',
      'IDEMPOTENCY_IN_PROGRESS',
      'replay {"data":"first"}',
      'IDEMPOTENCY_KEY_REUSED',
      'IDEMPOTENCY_IN_PROGRESS',
      'k/2 (answer of k/2)',
      'k/3',
    ]);
    expect(stored).toEqual([
      { accountId: 'acc_1', key: 'free', requestDigest: 'd', response: 'answer of k/1' },
      { accountId: 'acc_1', key: 'left-by-an-earlier-version', requestDigest: 'd', response: 'answer of k/2' },
    ]);
  });

  it('stores a batch’s one answer, built from all its events in request order, in the events’ transaction before it commits', async () => {
    const { sut, calls, stored, insert } = setup(new Map([[accountKey('acc_1', 'b'), null]]));
    const appended = sut.append([
      plain([request('a')]),
      keyed('b', 'd', [request('b'), request('a'), request('b')]),
      plain([request('c')]),
    ]);
    await reached(calls, 'grow 5');
    insert().resolve();
    expect(shown(await appended)).toEqual(['a/1', 'b/1,a/2,b/2 (answer of b/1,a/2,b/2)', 'c/1']);
    expect(calls.slice(-3)).toEqual(['moveHeads', 'store 1', 'commit']);
    expect(stored).toEqual([{ accountId: 'acc_1', key: 'b', requestDigest: 'd', response: 'answer of b/1,a/2,b/2' }]);
  });

  it('passes requests without a key straight to the ledger: no key locked, nothing stored', async () => {
    const { sut, calls, insert } = setup();
    const appended = sut.append([plain([request('a')]), plain([request('a'), request('b')])]);
    await reached(calls, 'grow 3');
    insert().resolve();
    expect(shown(await appended)).toEqual(['a/1', 'a/2,b/1']);
    expect(calls).toEqual(['begin', 'createMissing', 'lockHeads', 'insertMany 3', 'grow 3', 'moveHeads', 'commit']);
  });

  it('appends nothing when every key is refused, and stores nothing', async () => {
    const { sut, calls, stored } = setup(
      new Map([[accountKey('acc_1', 'answered'), { requestDigest: 'd', response: '{"data":1}' }]]),
    );
    expect(shown(await sut.append([keyed('answered', 'd'), keyed('held', 'd')]))).toEqual([
      'replay {"data":1}',
      'IDEMPOTENCY_IN_PROGRESS',
    ]);
    expect(calls).toEqual(['begin', 'lockKeys answered,held', 'commit']);
    expect(stored).toEqual([]);
  });

  it('fails every request of the transaction, stores no answer and commits nothing, when the insert fails', async () => {
    const { sut, calls, stored, insert } = setup(new Map([[accountKey('acc_1', 'k'), null]]));
    const appended = sut.append([keyed('k', 'd'), plain([request('p')])]);
    await reached(calls, 'grow 2');
    insert().reject(Object.assign(new Error('connection terminated'), { code: '57P01' }));
    await expect(appended).rejects.toThrow('connection terminated');
    expect(stored).toEqual([]);
    expect(calls).not.toContain('commit');
  });

  it('refuses the whole transaction with StaleSchemas, naming the stale accounts, right after the heads are locked: nothing inserted, no answer stored, the key locks rolled back with it', async () => {
    const { sut, calls, stored } = setup(
      new Map([[accountKey('acc_1', 'k'), null]]),
      new Map([
        ['acc_1', 7],
        ['acc_2', 3],
      ]),
    );
    const checked = (r: AppendRequest, generation: number): AppendRequest => ({
      ...r,
      schema: { generation, ref: null },
    });
    const appended = sut.append([
      keyed('k', 'd', [checked(request('k'), 7)]),
      plain([checked({ ...request('s'), accountId: 'acc_2' }, 2)]),
      plain([request('u')]),
    ]);
    const error: unknown = await appended.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StaleSchemas);
    expect([...(error as StaleSchemas).accounts]).toEqual(['acc_2']);
    expect(calls).toEqual(['begin', 'lockKeys k', 'createMissing', 'lockHeads', 'rollback']);
    expect(stored).toEqual([]);
  });

  it('writes events checked against the generation their transaction finds, each with the version that checked it', async () => {
    const { sut, calls, insert } = setup(new Map(), new Map([['acc_1', 7]]));
    const ref = { id: 7, action: 'doc.update', version: 2, valid: false };
    const appended = sut.append([plain([{ ...request('a'), schema: { generation: 7, ref } }, request('a')])]);
    await reached(calls, 'grow 2');
    insert().resolve();
    const [written] = await appended;
    expect((written as { events: { schema: unknown }[] }).events.map((e) => e.schema)).toEqual([ref, null]);
  });
});
