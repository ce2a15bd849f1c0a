import { generateKeyPairSync } from 'node:crypto';
import {
  CHECKPOINT_KEY_NAME,
  computeEventHash,
  computeEventHashV2,
  eventLeafHash,
  HashingV2,
  formatVerifierKey,
  GENESIS_HASH,
  frontierIds,
  merkleRoot,
  MerkleNode,
  parseVerifierKey,
  pushNode,
  saltsFor,
  signChainCheckpoint,
} from '@app/hashing';
import { like } from '@app/common/testing/like.fixture';
import { ExportDocument, ExportedEvent, InputError, readExportDocument } from './export-document';
import { formatReport } from './report';
import { verifyExport } from './verify-export';

const CHAIN_A = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
const CHAIN_B = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y';
const { privateKey } = generateKeyPairSync('ed25519');
const keys = [parseVerifierKey(formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey))];

/** A version-2 chain (docs/contract.md §17): its events, and their hashing as export.hashing names it. */
function chainV2(chainId: string, n: number): { events: ExportedEvent[]; hashing: Map<string, HashingV2> } {
  const events: ExportedEvent[] = [];
  const hashing = new Map<string, HashingV2>();
  let previousHash = GENESIS_HASH;
  for (let position = 1; position <= n; position++) {
    const e = {
      id: `evt_01JDQ8Z5X3N4K7M2P9R6T${chainId.slice(-1)}${String(position).padStart(4, '0')}`,
      timestamp: new Date(Date.UTC(2026, 10, 22, 7, 0, position)).toISOString(),
      actor: `user${position}@example.com`,
      action: 'doc.update',
      resource: position % 2 ? null : `doc:${position}`,
      chain: { id: chainId, name: 'v2', position },
      previousHash,
      context: { ip: `10.0.0.${position}`, note: 'café 😀' },
      hash: '',
    };
    const h: HashingV2 = { version: 2, salts: saltsFor(e), commitments: {} };
    e.hash = computeEventHashV2({ ...e, chainId, position }, h);
    events.push(e);
    hashing.set(e.id, h);
    previousHash = e.hash;
  }
  return { events, hashing };
}

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

/** The Merkle root of the chain's first `size` events (docs/contract.md §10), as a checkpoint signs it. */
const rootOf = (events: ExportedEvent[], size: number): string =>
  merkleRoot(events.slice(0, size).map((e) => eventLeafHash(e.hash))).toString('hex');

const unfiltered = { actor: null, action: null, resource: null, chain_id: null };
const doc = (events: ExportedEvent[], filters: ExportDocument['filters'] = unfiltered): ExportDocument => ({
  filters,
  count: events.length,
  events,
  pruned: new Map(),
  hashing: new Map(),
});
const internal = { internalOnly: true };
const note = (chainId: string, size: number, hash: string, key = privateKey) => ({
  label: `cp-${size}`,
  note: signChainCheckpoint({ chainId, size, hash }, key),
});

describe('verifyExport', () => {
  const a = chain(CHAIN_A, 6);
  const b = chain(CHAIN_B, 3, 'billing');

  it('verifies an honest export of two chains, interleaved, with checkpoints', () => {
    const mixed = [a[0]!, b[0]!, a[1]!, b[1]!, ...a.slice(2), b[2]!];
    const sut = verifyExport(doc(mixed), [note(CHAIN_A, 6, rootOf(a, 6)), note(CHAIN_B, 3, rootOf(b, 3))], keys);
    expect(sut.outcome).toBe('verified');
    expect(sut.findings).toEqual([]);
    const checked = { unconfirmed: [] };
    expect(sut.chains).toEqual([
      {
        chainId: CHAIN_A,
        name: 'default',
        events: 6,
        runs: [[1, 6]],
        hashesRecomputed: 6,
        linksChecked: 6,
        confirmedSize: 6,
        ...checked,
      },
      {
        chainId: CHAIN_B,
        name: 'billing',
        events: 3,
        runs: [[1, 3]],
        hashesRecomputed: 3,
        linksChecked: 3,
        confirmedSize: 3,
        ...checked,
      },
    ]);
    expect(sut.checkpoints.map((c) => c.status)).toEqual(['confirmed', 'confirmed']);
    expect(formatReport('x.json', sut)).toMatch(/RESULT: VERIFIED/);
    // A checkpoint of billing at size 2 leaves its position 3 unconfirmed.
    const short = verifyExport(doc(mixed), [note(CHAIN_A, 6, rootOf(a, 6)), note(CHAIN_B, 2, rootOf(b, 2))], keys);
    expect(short.outcome).toBe('unconfirmed');
    expect(short.findings).toEqual([
      like.objectContaining({ chainId: CHAIN_B, message: like.stringMatching(/^position 3 NOT CONFIRMED/) }),
    ]);
  });

  it('finds an altered field', () => {
    const edited = a.map((e) => (e.chain.position === 3 ? { ...e, actor: 'mallory' } : e));
    const sut = verifyExport(doc(edited), [], keys, internal);
    expect(sut.outcome).toBe('tampered');
    expect(sut.findings).toEqual([
      { kind: 'tampered', chainId: CHAIN_A, position: 3, eventId: a[2]!.id, message: like.stringMatching(/altered/) },
    ]);
  });

  it('finds a broken link and a bad genesis link', () => {
    const relinked = a.map((e) => (e.chain.position === 4 ? { ...e, previousHash: 'f'.repeat(64) } : e));
    relinked[3]!.hash = computeEventHash({ ...relinked[3]!, chainId: CHAIN_A, position: 4 });
    const badGenesis = { ...a[0]!, previousHash: 'e'.repeat(64) };
    badGenesis.hash = computeEventHash({ ...badGenesis, chainId: CHAIN_A, position: 1 });
    expect(verifyExport(doc(relinked), [], keys, internal).findings.map((f) => [f.position, f.message])).toEqual([
      [4, like.stringMatching(/previousHash f{64} does not match the hash of the event at position 3/)],
      [5, like.stringMatching(/previousHash [0-9a-f]{64} does not match the hash of the event at position 4/)],
    ]);
    expect(verifyExport(doc([badGenesis]), [], keys, internal).findings[0]!.message).toMatch(/64 zeros/);
  });

  it('calls a gap in an unfiltered export a removal, and a gap anywhere else not confirmed', () => {
    const holed = a.filter((e) => e.chain.position !== 3 && e.chain.position !== 4);
    expect(verifyExport(doc(holed), [], keys, internal).findings).toEqual([
      {
        kind: 'tampered',
        chainId: CHAIN_A,
        position: 5,
        eventId: a[4]!.id,
        message: like.stringMatching(/positions 3–4 are missing from an unfiltered export/),
      },
    ]);
    const filtered = verifyExport(doc(holed, { ...unfiltered, actor: 'alice' }), [], keys, internal);
    expect(filtered.outcome).toBe('unconfirmed');
    expect(filtered.chains[0]!.runs).toEqual([
      [1, 2],
      [5, 6],
    ]);
    expect(filtered.findings).toEqual([
      like.objectContaining({
        kind: 'unconfirmed',
        position: 5,
        message: like.stringMatching(/positions 3–4 are missing .*link from position 5 back to 2 cannot be checked/),
      }),
    ]);
  });

  it('judges gaps without the unsigned export header: deleting it disables nothing', () => {
    const holed = a.filter((e) => e.chain.position !== 3);
    const headless = readExportDocument({ data: holed });
    const internally = verifyExport(headless, [], keys, internal);
    expect(internally.outcome).toBe('unconfirmed');
    expect(internally.findings[0]!.message).toMatch(/position 3 is missing/);
    // With the checkpoint that covers the gap: the root cannot be recomputed, nothing of the chain is confirmed.
    const held = verifyExport(headless, [note(CHAIN_A, 6, rootOf(a, 6))], keys);
    expect(held.outcome).toBe('unconfirmed');
    expect(held.chains[0]).toMatchObject({
      confirmedSize: 0,
      unconfirmed: [
        [1, 2],
        [4, 6],
      ],
    });
    expect(formatReport('x.json', held)).not.toMatch(/RESULT: VERIFIED/);
  });

  it('finds duplicated ids and positions, a renamed chain, time going backwards and a wrong count', () => {
    const renamed = { ...a[1]!, chain: { ...a[1]!.chain, name: 'other' } };
    expect(verifyExport(doc([a[0]!, renamed]), [], keys, internal).findings[0]!.message).toMatch(
      /named both 'default' and 'other'/,
    );
    expect(verifyExport(doc([a[0]!, a[0]!]), [], keys, internal).findings.map((f) => f.message)).toEqual([
      like.stringMatching(/occurs more than once/),
      'position 1 occurs more than once',
    ]);
    const earlier = { ...a[1]!, timestamp: '2020-01-01T00:00:00.000Z' };
    earlier.hash = computeEventHash({ ...earlier, chainId: CHAIN_A, position: 2 });
    const third = { ...a[2]!, previousHash: earlier.hash };
    third.hash = computeEventHash({ ...third, chainId: CHAIN_A, position: 3 });
    expect(verifyExport(doc([a[0]!, earlier, third]), [], keys, internal).findings.map((f) => f.message)).toEqual([
      like.stringMatching(
        /^timestamp 2020-01-01T00:00:00.000Z is earlier than .*the timestamp of the event at position 1/,
      ),
    ]);
    expect(verifyExport({ ...doc(a), count: 7 }, [], keys, internal).findings[0]!.message).toMatch(
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
            message: like.stringMatching(/Merkle root of the exported events 1–4 is .* rewritten/),
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
      expect(sut.findings.filter((f) => f.kind === 'tampered')).toEqual([
        like.objectContaining({ kind: 'tampered', position: 5 }),
      ]);
      expect(verifyExport(doc(a.slice(0, 5)), [note(CHAIN_A, 5, rootOf(a, 5))], keys).outcome).toBe('verified');
    });

    it('cannot confirm a checkpoint from an export that does not start at position 1', () => {
      expect(verifyExport(doc(a.slice(2)), [note(CHAIN_A, 4, rootOf(a, 4))], keys).checkpoints[0]).toMatchObject({
        status: 'unconfirmed',
        message: like.stringMatching(/starts at position 3, not 1/),
      });
    });

    it('confirms the empty tree at size 0, and nothing else there', () => {
      expect(verifyExport(doc(a), [note(CHAIN_A, 0, rootOf(a, 0))], keys)).toMatchObject({
        outcome: 'unconfirmed',
        checkpoints: [{ status: 'confirmed' }],
        chains: [{ confirmedSize: 0, unconfirmed: [[1, 6]] }],
      });
      expect(verifyExport(doc(a), [note(CHAIN_A, 0, GENESIS_HASH)], keys).outcome).toBe('tampered');
    });

    it('cannot confirm a checkpoint beyond the export, and says why', () => {
      const sut = verifyExport(doc(a.slice(0, 4)), [note(CHAIN_A, 6, a[5]!.hash)], keys);
      expect(sut.outcome).toBe('unconfirmed');
      expect(sut.checkpoints[0]!.message).toMatch(
        /ends at position 4, below the checkpoint's size 6.*export a later period.*events 5–6 were removed/,
      );
      expect(formatReport('x.json', sut)).toMatch(/NOT CONFIRMED \(2\)[\s\S]*RESULT: NOT CONFIRMED/);
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
        checkpoints: [{ status: 'unconfirmed', message: like.stringMatching(/not signed by the given key/) }],
      });
      const good = note(CHAIN_A, 2, a[1]!.hash);
      const altered = { ...good, note: good.note.replace('\n2\n', '\n3\n') };
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
        like.stringMatching(/two signed checkpoints of size 5 name different roots/),
      );
    });

    it('treats a note that is not a checkpoint as bad input', () => {
      expect(() => verifyExport(doc(a), [{ label: 'x', note: 'hello\n' }], keys)).toThrow(InputError);
    });
  });
});

describe('verifyExport: only a signature confirms (contract §10)', () => {
  const a = chain(CHAIN_A, 15);
  const b = chain(CHAIN_B, 3, 'billing');

  /** Events rewritten from `from` on, every hash and link recomputed: a file that agrees with itself. */
  function forgedFrom(events: ExportedEvent[], from: number): ExportedEvent[] {
    const forged = events.map((e) => ({ ...e }));
    for (let i = from - 1; i < forged.length; i++) {
      forged[i]!.actor = 'mallory';
      forged[i]!.previousHash = i === 0 ? GENESIS_HASH : forged[i - 1]!.hash;
      forged[i]!.hash = computeEventHash({ ...forged[i]!, chainId: forged[i]!.chain.id, position: i + 1 });
    }
    return forged;
  }

  it('does not call a fully fabricated export without a checkpoint VERIFIED: every position is NOT CONFIRMED', () => {
    const fabricated = forgedFrom(a, 1);
    const sut = verifyExport(doc([...fabricated, ...b]), [], keys);
    expect(sut.outcome).toBe('unconfirmed');
    expect(sut.findings).toEqual([
      like.objectContaining({
        kind: 'unconfirmed',
        chainId: CHAIN_A,
        message: like.stringMatching(/^positions 1–15 NOT CONFIRMED: no checkpoint was given/),
      }),
      like.objectContaining({ chainId: CHAIN_B, message: like.stringMatching(/^positions 1–3 NOT CONFIRMED/) }),
    ]);
    const text = formatReport('x.json', sut);
    expect(text).not.toMatch(/VERIFIED|checked out/);
    expect(text).toMatch(/NOT CONFIRMED: 1–15[\s\S]*RESULT: NOT CONFIRMED/);
  });

  it('confirms positions up to a signed size only: forged events 6–15 after a size-5 checkpoint are NOT CONFIRMED', () => {
    const forged = forgedFrom(a, 6);
    const sut = verifyExport(doc(forged), [note(CHAIN_A, 5, rootOf(a, 5))], keys);
    expect(sut.outcome).toBe('unconfirmed');
    expect(sut.checkpoints[0]!.status).toBe('confirmed');
    expect(sut.chains[0]).toMatchObject({ confirmedSize: 5, unconfirmed: [[6, 15]] });
    expect(sut.findings).toEqual([
      like.objectContaining({
        kind: 'unconfirmed',
        message: like.stringMatching(/^positions 6–15 NOT CONFIRMED: the largest checkpoint .* has size 5/),
      }),
    ]);
    expect(formatReport('x.json', sut)).toMatch(/confirmed by a signed checkpoint: 1–5; NOT CONFIRMED: 6–15/);
    // The whole chain under a checkpoint of its size: verified.
    expect(
      verifyExport(doc(a), [note(CHAIN_A, 5, rootOf(a, 5)), note(CHAIN_A, 15, rootOf(a, 15))], keys),
    ).toMatchObject({ outcome: 'verified', chains: [{ confirmedSize: 15, unconfirmed: [] }] });
  });

  it('confirms nothing with a checkpoint of another key, or with a chain no checkpoint covers', () => {
    const stranger = generateKeyPairSync('ed25519').privateKey;
    const foreign = verifyExport(doc(a), [note(CHAIN_A, 15, rootOf(a, 15), stranger)], keys);
    expect(foreign.chains[0]).toMatchObject({ confirmedSize: 0, unconfirmed: [[1, 15]] });
    const half = verifyExport(doc([...a, ...b]), [note(CHAIN_A, 15, rootOf(a, 15))], keys);
    expect(half.outcome).toBe('unconfirmed');
    expect(half.chains.map((c) => c.unconfirmed)).toEqual([[], [[1, 3]]]);
    // A later start cannot be confirmed by any root: it is named from where it starts.
    expect(verifyExport(doc(a.slice(9)), [note(CHAIN_A, 15, rootOf(a, 15))], keys).chains[0]!.unconfirmed).toEqual([
      [10, 15],
    ]);
  });

  it('does not call an empty file verified unless a checkpoint confirms it', () => {
    expect(verifyExport(doc([]), [], keys).outcome).toBe('unconfirmed');
    expect(verifyExport(doc([]), [note(CHAIN_A, 0, rootOf(a, 0))], keys).outcome).toBe('verified');
  });

  describe('--internal-only', () => {
    it('calls a file that agrees with itself CONSISTENT and says that no signature was checked', () => {
      const sut = verifyExport(doc(forgedFrom(a, 1)), [], keys, internal);
      expect(sut).toMatchObject({ outcome: 'consistent', findings: [], checkpoints: [] });
      const text = formatReport('x.json', sut);
      expect(text).toMatch(/RESULT: CONSISTENT: .*No signature was checked/);
      expect(text).not.toMatch(/VERIFIED|NOT CONFIRMED/);
    });

    it('still finds what contradicts the file itself', () => {
      const edited = a.map((e) => (e.chain.position === 3 ? { ...e, actor: 'mallory' } : e));
      expect(verifyExport(doc(edited), [], keys, internal).outcome).toBe('tampered');
      expect(verifyExport(doc([a[0]!, a[0]!]), [], keys, internal).outcome).toBe('tampered');
    });
  });

  it('escapes control characters of the file in the report, so ESC[8m cannot hide the result', () => {
    const hidden = chain(CHAIN_A, 2, 'x\u001b[8m');
    const forgedLine = { ...hidden[1]!, id: 'evt_x\nRESULT: VERIFIED: all good' };
    const text = formatReport('x.json', verifyExport(doc([hidden[0]!, forgedLine]), [], keys));
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain("'x\\u001b[8m'");
    expect(text).toContain('evt_x\\u000aRESULT: VERIFIED: all good');
    expect(text.split('\n').filter((l) => l.startsWith('RESULT'))).toEqual([like.stringMatching(/^RESULT: TAMPERING/)]);
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
      pruned: new Map(),
      hashing: new Map(),
    });
    expect(sut({ data: [] })).toEqual({
      filters: null,
      count: null,
      events: [],
      pruned: new Map(),
      hashing: new Map(),
    });
  });

  it.each([
    ['not an object', []],
    ['another version', { version: 1, salts: {}, commitments: {} }],
    ['a salt that is not text', { version: 2, salts: { actor: 1 }, commitments: {} }],
    ['an unknown field', { version: 2, salts: { email: 'x' }, commitments: {} }],
    ['a context that is not an object', { version: 2, salts: { context: 'x' }, commitments: {} }],
  ])('calls an export.hashing entry that is %s bad input', (_label, hashing) => {
    expect(() => sut({ export: { hashing: { [good.id]: hashing } }, data: [good] })).toThrow(InputError);
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

  describe('an export of a pruned chain (contract §14)', () => {
    const all = chain(CHAIN_A, 13);
    /** The header's `pruned` for a chain pruned through `last`: its hash, time and the nodes over 1…last − 1. */
    const prunedHeader = (last: number) => {
      const stack: MerkleNode[] = [];
      all.slice(0, last - 1).forEach((e, i) => pushNode(stack, { level: 0, index: i, hash: eventLeafHash(e.hash) }));
      expect(stack.map(({ level, index }) => ({ level, index }))).toEqual(frontierIds(last - 1));
      return {
        chainId: CHAIN_A,
        lastPosition: last,
        lastHash: all[last - 1]!.hash,
        lastTimestamp: all[last - 1]!.timestamp,
        nodes: stack.map((n) => ({ level: n.level, index: n.index, hash: n.hash.toString('hex') })),
      };
    };
    const prunedDoc = (last: number, header = prunedHeader(last)): ExportDocument =>
      readExportDocument(
        JSON.parse(
          JSON.stringify({
            export: { filters: unfiltered, count: 13 - last, pruned: [header] },
            data: all.slice(last),
          }),
        ),
      );

    it.each([1, 2, 3, 7, 8, 9])(
      'pruned through %i: the first link is checked against the kept hash, and a signed checkpoint confirms every retained event',
      (last) => {
        const sut = verifyExport(prunedDoc(last), [note(CHAIN_A, 13, rootOf(all, 13))], keys);
        expect(sut.findings).toEqual([]);
        expect(sut.outcome).toBe('verified');
        expect(sut.chains[0]).toMatchObject({ runs: [[last + 1, 13]], linksChecked: 13 - last, confirmedSize: 13 });
        // Also with a checkpoint of the pruned size itself, for the part it covers.
        const partial = verifyExport(prunedDoc(last), [note(CHAIN_A, last, rootOf(all, last))], keys);
        expect(partial.checkpoints[0]!.status).toBe('confirmed');
        expect(partial.outcome).toBe('unconfirmed');
      },
    );

    it('without a checkpoint nothing is confirmed; a forged kept hash or kept node is tampering', () => {
      expect(verifyExport(prunedDoc(7), [], keys).outcome).toBe('unconfirmed');
      expect(verifyExport(prunedDoc(7), [], keys, internal).outcome).toBe('consistent');
      const cp = [note(CHAIN_A, 13, rootOf(all, 13))];
      // A kept hash that is not the last pruned event's: the first link breaks, and the signed root disagrees.
      const wrongHash = { ...prunedHeader(7), lastHash: all[5]!.hash };
      const linked = verifyExport(prunedDoc(7, wrongHash), cp, keys);
      expect(linked.outcome).toBe('tampered');
      expect(linked.findings.map((f) => f.message)).toEqual(
        like.arrayContaining([like.stringMatching(/previousHash/), like.stringMatching(/kept hash were rewritten/)]),
      );
      // A forged node: only the signed root tells.
      const header = prunedHeader(7);
      const forgedNode = {
        ...header,
        nodes: header.nodes.map((n, i) => (i === 0 ? { ...n, hash: 'ab'.repeat(32) } : n)),
      };
      const forged = verifyExport(prunedDoc(7, forgedNode), cp, keys);
      expect(forged.outcome).toBe('tampered');
      expect(forged.checkpoints[0]!.status).toBe('tampered');
      // A header whose nodes are not the ones over 1…lastPosition − 1 is bad input.
      expect(() => prunedDoc(7, { ...header, nodes: header.nodes.slice(1) })).toThrow(InputError);
    });
  });
});

describe('verify-export of version-2 events (contract §17)', () => {
  const { events, hashing } = chainV2(CHAIN_A, 4);
  const v2doc = (h: Map<string, HashingV2>, evs = events): ExportDocument => ({ ...doc(evs), hashing: h });

  it('re-hashes each event with the salts export.hashing names, and confirms them with a checkpoint', () => {
    const report = verifyExport(v2doc(hashing), [note(CHAIN_A, 4, rootOf(events, 4))], keys);
    expect(report.findings).toEqual([]);
    expect(report.outcome).toBe('verified');
  });

  it('finds a changed value, a changed salt, or a missing hashing as tampering', () => {
    const changed = events.map((e, i) => (i === 1 ? { ...e, actor: 'mallory' } : e));
    expect(verifyExport(v2doc(hashing, changed), [], keys, { internalOnly: true }).outcome).toBe('tampered');
    const salted = new Map(hashing);
    const h = salted.get(events[2]!.id)!;
    salted.set(events[2]!.id, { ...h, salts: { ...h.salts, actor: 'f'.repeat(32) } });
    expect(verifyExport(v2doc(salted), [], keys, { internalOnly: true }).outcome).toBe('tampered');
    const stripped = new Map(hashing);
    stripped.delete(events[0]!.id);
    expect(verifyExport(v2doc(stripped), [], keys, { internalOnly: true }).outcome).toBe('tampered');
    const unsalted = new Map(hashing);
    unsalted.set(events[3]!.id, { version: 2, salts: {}, commitments: {} });
    const report = verifyExport(v2doc(unsalted), [], keys, { internalOnly: true });
    expect(report.outcome).toBe('tampered');
    expect(report.findings[0]!.message).toMatch(/does not determine a hash/);
  });
});
