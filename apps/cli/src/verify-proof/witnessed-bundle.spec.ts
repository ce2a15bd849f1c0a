import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CHECKPOINT_KEY_NAME,
  cosign,
  eventLeafHash,
  extendTree,
  formatCheckpoint,
  formatVerifierKey,
  leafHash,
  merkleRoot,
  NodeReader,
  parseCosignatureVerifierKey,
  parseNote,
  parseVerifierKey,
  proveInclusion,
  signChainCheckpoint,
  signNote,
} from '@app/hashing';
import { run } from '../cli';
import { InputError } from '../verify-export/export-document';
import { checkInclusionProof } from './verify-proof';
import { checkWitnessedBundle, readWitnessedBundle, WitnessedBundle, witnessedBy } from './witnessed-bundle';

const CHAIN = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
const EVENT_HASH = 'ab'.repeat(32);
const logKey = generateKeyPairSync('ed25519').privateKey;
const logVerifierKey = formatVerifierKey(CHECKPOINT_KEY_NAME, logKey);
const logVerifiers = [parseVerifierKey(logVerifierKey)];
const witnessKeys = [1, 2, 3].map(() => generateKeyPairSync('ed25519').privateKey);
const witnesses = witnessKeys.map((key, i) =>
  parseCosignatureVerifierKey(formatVerifierKey(`witness.test/w${i + 1}`, key, 0x04)),
);

/** A chain of one event, its checkpoint as the leaf `at` of a checkpoint log of three, cosigned by `by`. */
async function bundleOf(
  by: KeyObject[],
  options: { at?: number; key?: KeyObject; chainId?: string } = {},
): Promise<WitnessedBundle> {
  const at = options.at ?? 1;
  const checkpoint = signChainCheckpoint(
    { chainId: options.chainId ?? CHAIN, size: 1, hash: eventLeafHash(EVENT_HASH).toString('hex') },
    options.key ?? logKey,
  );
  const notes = ['other-0\n', 'other-1\n', 'other-2\n'];
  notes[at] = checkpoint;
  const leaves = notes.map((note) => leafHash(Buffer.from(note, 'utf8')));
  const nodes = new Map(extendTree(0, [], leaves).nodes.map((n) => [`${n.level}/${n.index}`, n.hash]));
  const read: NodeReader = (ids) => Promise.resolve(ids.map((id) => nodes.get(`${id.level}/${id.index}`)!));
  const text = formatCheckpoint({ origin: 'audit-trail/checkpoint-log', size: 3, hash: merkleRoot(leaves) });
  const signed = signNote(text, { name: CHECKPOINT_KEY_NAME, privateKey: logKey });
  const lines = by.map((key) => cosign(text, key, witnesses[witnessKeys.indexOf(key)]!.name, 1_765_000_000));
  const proof = await proveInclusion(1, 3, read);
  return {
    checkpoint,
    logCheckpoint: `${signed}${lines.join('')}`,
    leafIndex: 1,
    proof: proof.map((h) => h.toString('hex')),
  };
}

describe('checkWitnessedBundle', () => {
  const sut = checkWitnessedBundle;

  it('confirms a bundle with a quorum of valid cosignatures and a valid inclusion proof', async () => {
    const result = sut(await bundleOf(witnessKeys.slice(0, 2)), logVerifiers, witnesses, 2);
    expect(result).toMatchObject({ ok: true, logSize: 3, checkpoint: { chainId: CHAIN, size: 1 } });
    expect(result.ok && result.cosigners).toHaveLength(2);
  });

  it('does not confirm fewer cosignatures than the quorum, nor cosignatures of other keys', async () => {
    const bundle = await bundleOf(witnessKeys.slice(0, 2));
    expect(sut(bundle, logVerifiers, witnesses, 3)).toMatchObject({ ok: false, kind: 'unconfirmed' });
    expect(sut(bundle, logVerifiers, witnesses.slice(2), 1)).toMatchObject({ ok: false, kind: 'unconfirmed' });
  });

  it('finds tampering: a proof to another leaf, an altered cosignature, a chain checkpoint signed by another key', async () => {
    const bundle = await bundleOf(witnessKeys);
    expect(sut({ ...bundle, leafIndex: 2 }, logVerifiers, witnesses, 3)).toMatchObject({ ok: false, kind: 'tampered' });
    const text = parseNote(bundle.logCheckpoint).text;
    const altered = bundle.logCheckpoint.replace(text, text.replace('\n3\n', '\n4\n'));
    expect(sut({ ...bundle, logCheckpoint: altered }, logVerifiers, witnesses, 1)).toMatchObject({ ok: false });
    const stranger = generateKeyPairSync('ed25519').privateKey;
    expect(sut(await bundleOf(witnessKeys, { key: stranger }), logVerifiers, witnesses, 1)).toMatchObject({
      ok: false,
      kind: 'unconfirmed',
    });
  });

  it('reads the saved answer or its data, and refuses anything else as bad input', async () => {
    const bundle = await bundleOf(witnessKeys);
    expect(readWitnessedBundle({ data: { ...bundle, witnesses: 3 } }, 'b.json')).toEqual(bundle);
    expect(readWitnessedBundle(bundle, 'b.json')).toEqual(bundle);
    expect(() => readWitnessedBundle({ data: { ...bundle, proof: ['xyz'] } }, 'b.json')).toThrow(InputError);
    expect(() => readWitnessedBundle([], 'b.json')).toThrow(InputError);
  });
});

describe('verify-proof with a witnessed bundle', () => {
  const proofFile = {
    chainId: CHAIN,
    position: 1,
    leafIndex: 0,
    size: 1,
    eventHash: EVENT_HASH,
    rootHash: eventLeafHash(EVENT_HASH).toString('hex'),
    proof: [],
  };
  const check = (bundle: WitnessedBundle, quorum: number) =>
    checkInclusionProof(proofFile, { label: 'cp', note: bundle.checkpoint }, logVerifiers, {
      witnessed: { label: 'b.json', bundle, witnesses, quorum },
    });

  it('is VERIFIED, saying by how many witnesses, when the bundle checks out', async () => {
    const report = check(await bundleOf(witnessKeys), 3);
    expect(report.outcome).toBe('verified');
    expect(report.lines.join('\n')).toMatch(/Witnessed by 3 of 3 given witness/);
  });

  it('is NOT CONFIRMED below the quorum, or when the bundle is of another checkpoint', async () => {
    expect(check(await bundleOf(witnessKeys.slice(0, 1)), 2).outcome).toBe('unconfirmed');
    const given = (await bundleOf(witnessKeys)).checkpoint;
    const bundle = await bundleOf(witnessKeys, { chainId: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y' });
    const report = checkInclusionProof(proofFile, { label: 'cp', note: given }, logVerifiers, {
      witnessed: { label: 'b.json', bundle, witnesses, quorum: 1 },
    });
    expect(report.outcome).toBe('unconfirmed');
    expect(report.lines.join('\n')).toMatch(
      /is of chain chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y .* not of the checkpoint given/,
    );
  });
});

describe('cli verify-proof --witness --quorum --witnessed', () => {
  let dir: string;
  const at = (name: string) => join(dir, name);
  const vkeys = witnessKeys.map((key, i) => formatVerifierKey(`witness.test/w${i + 1}`, key, 0x04));

  async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await run(args, { out: (s) => (out += s), err: (s) => (err += s), env: {} });
    return { code, out, err };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'witnessed-spec-'));
    const bundle = await bundleOf(witnessKeys.slice(0, 2));
    writeFileSync(at('bundle.json'), JSON.stringify({ data: { ...bundle, witnesses: 2 } }));
    writeFileSync(at('cp.txt'), bundle.checkpoint);
    writeFileSync(
      at('proof.json'),
      JSON.stringify({
        data: {
          chainId: CHAIN,
          position: 1,
          leafIndex: 0,
          size: 1,
          eventHash: EVENT_HASH,
          rootHash: eventLeafHash(EVENT_HASH).toString('hex'),
          proof: [],
        },
      }),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const base = () => ['verify-proof', at('proof.json'), '--checkpoint', at('cp.txt'), '--key', logVerifierKey];

  it('exits 0 with a quorum met, 1 without', async () => {
    const witnessed = ['--witnessed', at('bundle.json')];
    const two = await cli([...base(), '--witness', vkeys[0]!, '--witness', vkeys[1]!, ...witnessed]);
    expect(two).toMatchObject({ code: 0, err: '' });
    expect(two.out).toMatch(/Witnessed by 2 of 2/);
    const all = await cli([...base(), ...vkeys.flatMap((k) => ['--witness', k]), ...witnessed]);
    expect(all.code).toBe(1);
    expect(all.out).toMatch(/NOT CONFIRMED: witnessed bundle .* fewer than 3/);
    const quorum = await cli([...base(), ...vkeys.flatMap((k) => ['--witness', k]), '--quorum', '2', ...witnessed]);
    expect(quorum.code).toBe(0);
  });

  it('exits 2 for options that do not go together or a bad witness key', async () => {
    expect((await cli([...base(), '--witness', vkeys[0]!])).code).toBe(2);
    expect((await cli([...base(), '--witnessed', at('bundle.json')])).code).toBe(2);
    const bad = await cli([...base(), '--witness', logVerifierKey, '--witnessed', at('bundle.json')]);
    expect(bad).toMatchObject({ code: 2, err: expect.stringMatching(/--witness:/) as unknown });
    const quorum = await cli([...base(), '--witness', vkeys[0]!, '--quorum', '2', '--witnessed', at('bundle.json')]);
    expect(quorum).toMatchObject({ code: 2, err: expect.stringMatching(/--quorum/) as unknown });
  });
});

describe('witnessedBy (verify-export --witnessed)', () => {
  const cp = { chainId: CHAIN, size: 1, hash: eventLeafHash(EVENT_HASH).toString('hex') };

  it('finds the bundle of the checkpoint among several', async () => {
    const other = await bundleOf(witnessKeys, { chainId: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y' });
    const mine = await bundleOf(witnessKeys);
    const bundles = [
      { label: 'other.json', bundle: other },
      { label: 'mine.json', bundle: mine },
    ];
    expect(witnessedBy(cp, { witnesses, quorum: 3, bundles }, logVerifiers)).toMatchObject({
      ok: true,
      label: 'mine.json',
      logSize: 3,
    });
  });

  it('reports a failing bundle of the checkpoint before the absence of one', async () => {
    const mine = await bundleOf(witnessKeys.slice(0, 1));
    const none = witnessedBy(cp, { witnesses, quorum: 1, bundles: [] }, logVerifiers);
    expect(none).toMatchObject({
      ok: false,
      kind: 'unconfirmed',
      message: expect.stringMatching(/no witnessed bundle/) as unknown,
    });
    const short = witnessedBy(
      cp,
      { witnesses, quorum: 2, bundles: [{ label: 'mine.json', bundle: mine }] },
      logVerifiers,
    );
    expect(short).toMatchObject({
      ok: false,
      kind: 'unconfirmed',
      message: expect.stringMatching(/^witnessed bundle mine.json: .*fewer than 2/) as unknown,
    });
    const moved = witnessedBy(
      cp,
      { witnesses, quorum: 1, bundles: [{ label: 'mine.json', bundle: { ...mine, leafIndex: 0 } }] },
      logVerifiers,
    );
    expect(moved).toMatchObject({ ok: false, kind: 'tampered' });
  });
});
