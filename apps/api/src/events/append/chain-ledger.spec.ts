import { Db } from '@app/database';
import { computeEventHashV2, deriveSalts, GENESIS_HASH } from '@app/hashing';
import { EventRecord } from '@app/database';
import { reached, recordingLedger, request } from './ledger.fixture';

/** The event's hash recomputed from its members, as a verifier does. */
const rehash = (event: EventRecord) =>
  computeEventHashV2(
    { ...event, timestamp: event.timestamp.toISOString() },
    { version: 2, salts: deriveSalts(event.saltSeed!, event), commitments: {} },
  );

describe('ChainLedger', () => {
  it('grows the trees while the events are being inserted, and moves the heads once both are done', async () => {
    const { ledger, calls, insert } = recordingLedger();
    const appended = ledger.transaction((append) => append([request('a'), request('b'), request('a')]));
    await reached(calls, 'grow 3');
    expect(calls).toEqual(['begin', 'createMissing', 'lockHeads', 'insertMany 3', 'grow 3']);
    insert().resolve();
    const events = await appended;
    expect(calls).toEqual(['begin', 'createMissing', 'lockHeads', 'insertMany 3', 'grow 3', 'moveHeads', 'commit']);
    expect(events.map((e) => `${e.chainName}/${e.position}`)).toEqual(['a/1', 'b/1', 'a/2']);
  });

  it('links each event to the one before it on its chain, with a hash a verifier recomputes', async () => {
    const { ledger, insert, calls } = recordingLedger();
    const appended = ledger.transaction((append) => append([request('a', 'x'), request('a', 'y'), request('b', 'z')]));
    await reached(calls, 'grow 3');
    insert().resolve();
    const [x, y, z] = await appended;
    expect([x!.previousHash, y!.previousHash, z!.previousHash]).toEqual([GENESIS_HASH, x!.hash, GENESIS_HASH]);
    for (const event of [x!, y!, z!]) expect(event.hash).toBe(rehash(event));
    expect(new Set([x!.hash, y!.hash, z!.hash]).size).toBe(3);
    expect(y!.timestamp.getTime()).toBeGreaterThanOrEqual(x!.timestamp.getTime());
  });

  it('fails with the insert’s error when the insert fails after the trees grew, and moves no head', async () => {
    const { ledger, calls, insert } = recordingLedger();
    const appended = ledger.transaction((append) => append([request('a')]));
    await reached(calls, 'grow 1');
    insert().reject(new Error('duplicate key value violates unique constraint "uq_events_chain_position"'));
    await expect(appended).rejects.toThrow('uq_events_chain_position');
    expect(calls).not.toContain('moveHeads');
    expect(calls).not.toContain('commit');
  });

  it('remembers a chain as committed only after its own transaction commits: the next one skips creating it', async () => {
    const { ledger, calls, insert } = recordingLedger();
    const within = ledger.append([request('a')], {} as Db);
    await reached(calls, 'grow 1');
    insert().resolve();
    await within;
    calls.length = 0;
    const first = ledger.transaction((append) => append([request('a')]));
    await reached(calls, 'grow 1');
    insert().resolve();
    await first;
    expect(calls[1]).toBe('createMissing'); // the caller's transaction (append) may still have rolled back
    calls.length = 0;
    const second = ledger.transaction((append) => append([request('a')]));
    await reached(calls, 'grow 1');
    insert().resolve();
    await second;
    expect(calls).toEqual(['begin', 'lockHeads', 'insertMany 1', 'grow 1', 'moveHeads', 'commit']);
  });

  it('writes nothing for no events', async () => {
    const { ledger, calls } = recordingLedger();
    await expect(ledger.transaction((append) => append([]))).resolves.toEqual([]);
    expect(calls).toEqual(['begin', 'commit']);
  });
});
