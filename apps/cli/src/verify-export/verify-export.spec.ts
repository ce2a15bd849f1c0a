import { generateKeyPairSync } from 'node:crypto';
import {
  CHECKPOINT_KEY_NAME,
  computeEventHash,
  eventLeafHash,
  formatVerifierKey,
  GENESIS_HASH,
  merkleRoot,
  parseVerifierKey,
  signChainCheckpoint,
} from '@app/hashing';
import { ExportDocument, ExportedEvent, InputError, readExportDocument } from './export-document';
import { formatReport } from './report';
import { verifyExport } from './verify-export';

const CHAIN_A = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
const CHAIN_B = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y';
const { privateKey } = generateKeyPairSync('ed25519');
const keys = [parseVerifierKey(formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey))];

function chain(chainId: string, n: number, name = 'default'): ExportedEvent[] {
  const events: ExportedEvent[] = [];
  let previousHash = GENESIS_HASH;
  for (let position = 1; position <= n; position++) {
    const e = {
      id: `evt_01JDQ8Z5X3N4K7M2P9R6T${chainId.slice(-1)}${String(position).padStart(4, '0')}`,
      timestamp: new Date(Date.UTC(2026, 10, 22, 7, 0, position)).toISOString(),
      actor: 'alice',
      action: 'doc.update',
      resource: position % 2 ? null : `doc:${position}`,
      chain: { id: chainId, name, position },
      previousHash,
      context: { position, note: 'café 😀' },
      hash: '',
    };
    e.hash = computeEventHash({ ...e, chainId, position });
    events.push(e);
    previousHash = e.hash;
  }
  return events;
}

/** The Merkle root of the chain's first `size` events (contract §10), as a checkpoint signs it. */
const rootOf = (events: ExportedEvent[], size: number): string =>
  merkleRoot(events.slice(0, size).map((e) => eventLeafHash(e.hash))).toString('hex');

const unfiltered = { actor: null, action: null, resource: null, chain_id: null };
const doc = (events: ExportedEvent[], filters: ExportDocument['filters'] = unfiltered): ExportDocument => ({
  filters,
  count: events.length,
  events,
});
const note = (chainId: string, size: number, hash: string, key = privateKey) => ({
  label: `cp-${size}`,
  note: signChainCheckpoint({ chainId, size, hash }, key),
});

describe('verifyExport', () => {
  const a = chain(CHAIN_A, 6);
  const b = chain(CHAIN_B, 3, 'billing');

  it('verifies an honest export of two chains, interleaved, with checkpoints', () => {
    const mixed = [a[0]!, b[0]!, a[1]!, b[1]!, ...a.slice(2), b[2]!];
    const sut = verifyExport(doc(mixed), [note(CHAIN_A, 6, rootOf(a, 6)), note(CHAIN_B, 2, rootOf(b, 2))], keys);
    expect(sut.outcome).toBe('verified');
    expect(sut.findings).toEqual([]);
    expect(sut.chains).toEqual([
      { chainId: CHAIN_A, name: 'default', events: 6, runs: [[1, 6]], hashesRecomputed: 6, linksChecked: 6 },
      { chainId: CHAIN_B, name: 'billing', events: 3, runs: [[1, 3]], hashesRecomputed: 3, linksChecked: 3 },
    ]);
    expect(sut.checkpoints.map((c) => c.status)).toEqual(['confirmed', 'confirmed']);
    expect(formatReport('x.json', sut)).toMatch(/RESULT: VERIFIED/);
  });

  it('finds an altered field', () => {
    const edited = a.map((e) => (e.chain.position === 3 ? { ...e, actor: 'mallory' } : e));
    const sut = verifyExport(doc(edited), [], keys);
    expect(sut.outcome).toBe('tampered');
    expect(sut.findings).toEqual([
      { kind: 'tampered', chainId: CHAIN_A, position: 3, eventId: a[2]!.id, message: expect.stringMatching(/altered/) },
    ]);
  });

  it('finds a broken link and a bad genesis link', () => {
    const relinked = a.map((e) => (e.chain.position === 4 ? { ...e, previousHash: 'f'.repeat(64) } : e));
    relinked[3]!.hash = computeEventHash({ ...relinked[3]!, chainId: CHAIN_A, position: 4 });
    const badGenesis = { ...a[0]!, previousHash: 'e'.repeat(64) };
    badGenesis.hash = computeEventHash({ ...badGenesis, chainId: CHAIN_A, position: 1 });
    expect(verifyExport(doc(relinked), [], keys).findings.map((f) => [f.position, f.message])).toEqual([
      [4, expect.stringMatching(/previousHash f{64} does not match the hash of the event at position 3/)],
      [5, expect.stringMatching(/previousHash [0-9a-f]{64} does not match the hash of the event at position 4/)],
    ]);
    expect(verifyExport(doc([badGenesis]), [], keys).findings[0]!.message).toMatch(/64 zeros/);
  });

  it('calls a gap in an unfiltered export a removal, and leaves it alone in a filtered one', () => {
    const holed = a.filter((e) => e.chain.position !== 3 && e.chain.position !== 4);
    expect(verifyExport(doc(holed), [], keys).findings).toEqual([
      {
        kind: 'tampered',
        chainId: CHAIN_A,
        position: 5,
        eventId: a[4]!.id,
        message: expect.stringMatching(/positions 3–4 are missing from an unfiltered export/),
      },
    ]);
    const filtered = verifyExport(doc(holed, { ...unfiltered, actor: 'alice' }), [], keys);
    expect(filtered.outcome).toBe('verified');
    expect(filtered.chains[0]!.runs).toEqual([
      [1, 2],
      [5, 6],
    ]);
    expect(verifyExport(doc(holed, null), [], keys).outcome).toBe('verified');
  });

  it('starts checking links where an export starts, whatever the first position', () => {
    expect(verifyExport(doc(a.slice(3)), [], keys)).toMatchObject({
      outcome: 'verified',
      chains: [{ runs: [[4, 6]], linksChecked: 2 }],
    });
  });

  it('finds duplicated ids and positions, a renamed chain, time going backwards and a wrong count', () => {
    const renamed = { ...a[1]!, chain: { ...a[1]!.chain, name: 'other' } };
    expect(verifyExport(doc([a[0]!, renamed]), [], keys).findings[0]!.message).toMatch(
      /named both 'default' and 'other'/,
    );
    expect(verifyExport(doc([a[0]!, a[0]!]), [], keys).findings.map((f) => f.message)).toEqual([
      expect.stringMatching(/occurs more than once/),
      'position 1 occurs more than once',
    ]);
    const earlier = { ...a[1]!, timestamp: '2020-01-01T00:00:00.000Z' };
    earlier.hash = computeEventHash({ ...earlier, chainId: CHAIN_A, position: 2 });
    const third = { ...a[2]!, previousHash: earlier.hash };
    third.hash = computeEventHash({ ...third, chainId: CHAIN_A, position: 3 });
    expect(verifyExport(doc([a[0]!, earlier, third]), [], keys).findings.map((f) => f.message)).toEqual([
      expect.stringMatching(
        /^timestamp 2020-01-01T00:00:00.000Z is earlier than .*the timestamp of the event at position 1/,
      ),
    ]);
    expect(verifyExport({ ...doc(a), count: 7 }, [], keys).findings[0]!.message).toMatch(
      /says 7 events but the file holds 6/,
    );
  });

  describe('checkpoints', () => {
    it('finds a chain rewritten after the checkpoint: its Merkle root is not the signed one', () => {
      expect(verifyExport(doc(a), [note(CHAIN_A, 4, 'c'.repeat(64))], keys)).toMatchObject({
        outcome: 'tampered',
        checkpoints: [
          {
            status: 'tampered',
            message: expect.stringMatching(/Merkle root of the exported events 1–4 is .* rewritten/),
          },
        ],
      });
      // Every hash recomputed and relinked from position 3 on: the export agrees with itself, not with the checkpoint.
      const forged = a.map((e) => ({ ...e }));
      forged[2]!.actor = 'mallory';
      for (let i = 2; i < forged.length; i++) {
        forged[i]!.previousHash = forged[i - 1]!.hash;
        forged[i]!.hash = computeEventHash({ ...forged[i]!, chainId: CHAIN_A, position: i + 1 });
      }
      const sut = verifyExport(doc(forged), [note(CHAIN_A, 5, rootOf(a, 5))], keys);
      expect(sut.findings).toEqual([expect.objectContaining({ kind: 'tampered', position: 5 })]);
      expect(verifyExport(doc(a), [note(CHAIN_A, 5, rootOf(a, 5))], keys).outcome).toBe('verified');
    });

    it('cannot confirm a checkpoint from an export that does not start at position 1', () => {
      expect(verifyExport(doc(a.slice(2)), [note(CHAIN_A, 4, rootOf(a, 4))], keys).checkpoints[0]).toMatchObject({
        status: 'unconfirmed',
        message: expect.stringMatching(/starts at position 3, not 1/),
      });
    });

    it('confirms the empty tree at size 0, and nothing else there', () => {
      expect(verifyExport(doc(a), [note(CHAIN_A, 0, rootOf(a, 0))], keys).outcome).toBe('verified');
      expect(verifyExport(doc(a), [note(CHAIN_A, 0, GENESIS_HASH)], keys).outcome).toBe('tampered');
    });

    it('cannot confirm a checkpoint beyond the export, and says why', () => {
      const sut = verifyExport(doc(a.slice(0, 4)), [note(CHAIN_A, 6, a[5]!.hash)], keys);
      expect(sut.outcome).toBe('unconfirmed');
      expect(sut.checkpoints[0]!.message).toMatch(
        /ends at position 4, below the checkpoint's size 6.*export a later period.*events 5–6 were removed/,
      );
      expect(formatReport('x.json', sut)).toMatch(/NOT CONFIRMED \(1\)[\s\S]*RESULT: NOT VERIFIED/);
    });

    it('cannot confirm a checkpoint of a chain the export lacks, or one a filtered export skips', () => {
      expect(verifyExport(doc(b), [note(CHAIN_A, 2, a[1]!.hash)], keys).checkpoints[0]!.message).toMatch(
        /no event of chain/,
      );
      const sparse = [a[0]!, a[5]!];
      expect(
        verifyExport(doc(sparse, { ...unfiltered, action: 'x' }), [note(CHAIN_A, 3, a[2]!.hash)], keys).checkpoints[0]!
          .message,
      ).toMatch(/does not hold every position 1–3/);
    });

    it('rejects a checkpoint not signed by the given key, and one with a bad signature', () => {
      const stranger = generateKeyPairSync('ed25519').privateKey;
      const unknown = verifyExport(doc(a), [note(CHAIN_A, 2, a[1]!.hash, stranger)], keys);
      expect(unknown).toMatchObject({
        outcome: 'unconfirmed',
        checkpoints: [{ status: 'unconfirmed', message: expect.stringMatching(/not signed by the given key/) }],
      });
      const good = note(CHAIN_A, 2, a[1]!.hash);
      const altered = { ...good, note: (good.note as string).replace('\n2\n', '\n3\n') };
      expect(verifyExport(doc(a), [altered], keys)).toMatchObject({
        outcome: 'tampered',
        checkpoints: [{ status: 'tampered' }],
      });
    });

    it('finds two signed roots for one size (a forked history)', () => {
      const sut = verifyExport(
        doc(a.slice(0, 2)),
        [note(CHAIN_A, 5, 'c'.repeat(64)), note(CHAIN_A, 5, 'd'.repeat(64))],
        keys,
      );
      expect(sut.findings.map((f) => f.message)).toContainEqual(
        expect.stringMatching(/two signed checkpoints of size 5 name different roots/),
      );
    });

    it('treats a note that is not a checkpoint as bad input', () => {
      expect(() => verifyExport(doc(a), [{ label: 'x', note: 'hello\n' }], keys)).toThrow(InputError);
    });
  });
});

describe('readExportDocument', () => {
  const sut = readExportDocument;
  const good = chain(CHAIN_A, 1)[0]!;

  it('reads the export header and items', () => {
    expect(sut({ export: { format: 'json', filters: unfiltered, count: 1 }, data: [good] })).toEqual({
      filters: unfiltered,
      count: 1,
      events: [good],
    });
    expect(sut({ data: [] })).toEqual({ filters: null, count: null, events: [] });
  });

  it.each([
    ['not an object', []],
    ['no data array', { export: {} }],
    ['an item that is not an object', { data: [1] }],
    ['a bad hash', { data: [{ ...good, hash: 'ABC' }] }],
    ['a missing chain', { data: [{ ...good, chain: undefined }] }],
    ['a zero position', { data: [{ ...good, chain: { ...good.chain, position: 0 } }] }],
    ['a context array', { data: [{ ...good, context: [] }] }],
  ])('calls %s bad input', (_label, value) => {
    expect(() => sut(value)).toThrow(InputError);
  });
});
