import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CHECKPOINT_KEY_NAME,
  computeEventHash,
  eventLeafHash,
  extendTree,
  formatVerifierKey,
  GENESIS_HASH,
  merkleRoot,
  NodeReader,
  parseVerifierKey,
  proveConsistency,
  proveInclusion,
  signChainCheckpoint,
} from '@app/hashing';
import { like } from '@app/common/testing/like.fixture';
import { run } from '../cli';
import { readConsistencyProof, readInclusionProof } from './proof-files';
import { checkConsistencyProof, checkInclusionProof } from './verify-proof';

const CHAIN = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
const OTHER_CHAIN = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y';
const { privateKey } = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519').privateKey;
const vkey = formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey);
const keys = [parseVerifierKey(vkey)];

/** Real event hashes of a chain of n events; `actorAt` lets a test rewrite one event (and so every later hash). */
function eventHashes(n: number, actorAt: (position: number) => string = () => 'alice'): string[] {
  const hashes: string[] = [];
  let previousHash = GENESIS_HASH;
  for (let position = 1; position <= n; position++) {
    previousHash = computeEventHash({
      id: `evt_01JDQ8Z5X3N4K7M2P9R6T0${String(position).padStart(4, '0')}`,
      chainId: CHAIN,
      position,
      actor: actorAt(position),
      action: 'doc.update',
      resource: null,
      context: { position },
      timestamp: new Date(Date.UTC(2026, 10, 22, 7, 0, position)).toISOString(),
      previousHash,
    });
    hashes.push(previousHash);
  }
  return hashes;
}

/** What the service would store and serve for a chain with these event hashes. */
function service(hashes: string[], chainId = CHAIN) {
  const leaves = hashes.map(eventLeafHash);
  const byId = new Map(extendTree(0, [], leaves).nodes.map((n) => [`${n.level}/${n.index}`, n.hash]));
  const read: NodeReader = (ids) => Promise.resolve(ids.map((id) => byId.get(`${id.level}/${id.index}`)!));
  const root = (size: number) => merkleRoot(leaves.slice(0, size)).toString('hex');
  return {
    root,
    checkpoint: (size: number, key: KeyObject = privateKey) =>
      signChainCheckpoint({ chainId, size, hash: root(size) }, key),
    inclusion: async (position: number, size: number) => ({
      data: {
        chainId,
        position,
        leafIndex: position - 1,
        size,
        eventHash: hashes[position - 1]!,
        rootHash: root(size),
        proof: (await proveInclusion(position - 1, size, read)).map((h) => h.toString('hex')),
      },
    }),
    consistency: async (from: number, to: number) => ({
      data: {
        chainId,
        from,
        to,
        fromRoot: root(from),
        toRoot: root(to),
        proof: (await proveConsistency(from, to, read)).map((h) => h.toString('hex')),
      },
    }),
  };
}

const honest = service(eventHashes(21));
/** Event 5 edited after a checkpoint, every later hash recomputed: a rewritten history of the same length. */
const rewritten = service(eventHashes(21, (p) => (p === 5 ? 'mallory' : 'alice')));

const cp = (label: string, note: string) => ({ label, note });

describe('checkInclusionProof', () => {
  it('verifies every event of a chain against a checkpoint of every size that covers it', async () => {
    for (let size = 1; size <= 21; size++) {
      for (let position = 1; position <= size; position++) {
        const sut = checkInclusionProof(
          readInclusionProof(await honest.inclusion(position, size)),
          cp('cp', honest.checkpoint(size)),
          keys,
        );
        expect([position, size, sut.outcome]).toEqual([position, size, 'verified']);
      }
    }
  });

  it('finds an event that is not in the signed tree: a rewritten history, an edited hash, an altered proof', async () => {
    const proof = readInclusionProof(await rewritten.inclusion(6, 21));
    const signed = cp('cp', honest.checkpoint(21));
    const rewrittenProof = checkInclusionProof(proof, signed, keys);
    expect(rewrittenProof.outcome).toBe('tampered');
    expect(rewrittenProof.lines.join('\n')).toMatch(/does not lead to the signed root[\s\S]*RESULT: TAMPERING FOUND/);

    const good = readInclusionProof(await honest.inclusion(6, 21));
    const editedHash = { ...good, eventHash: proof.eventHash };
    expect(checkInclusionProof(editedHash, signed, keys).outcome).toBe('tampered');
    const flipped = {
      ...good,
      proof: good.proof.map((h, i) => (i === 2 ? `${h.slice(0, 63)}${h[63] === '0' ? '1' : '0'}` : h)),
    };
    expect(checkInclusionProof(flipped, signed, keys).outcome).toBe('tampered');
    const shortened = { ...good, proof: good.proof.slice(1) };
    expect(checkInclusionProof(shortened, signed, keys).outcome).toBe('tampered');
  });

  it('reports a proof naming another root than the one signed for its size', async () => {
    const proof = readInclusionProof(await honest.inclusion(3, 21));
    const sut = checkInclusionProof({ ...proof, rootHash: rewritten.root(21) }, cp('cp', honest.checkpoint(21)), keys);
    expect(sut.outcome).toBe('tampered');
    expect(sut.lines.join('\n')).toMatch(/two different trees of one size/);
  });

  it('cannot confirm a proof against a checkpoint of another size or chain, or signed by an unknown key', async () => {
    const proof = readInclusionProof(await honest.inclusion(3, 20));
    for (const note of [
      honest.checkpoint(21),
      service(eventHashes(21), OTHER_CHAIN).checkpoint(20),
      honest.checkpoint(20, stranger),
    ]) {
      const sut = checkInclusionProof(proof, cp('cp', note), keys);
      expect(sut.outcome).toBe('unconfirmed');
      expect(sut.lines[sut.lines.length - 1]).toMatch(/^RESULT: NOT CONFIRMED/);
    }
  });

  it('finds a checkpoint whose signature does not verify', async () => {
    const note = honest.checkpoint(20).replace('\n20\n', '\n21\n');
    const sut = checkInclusionProof(readInclusionProof(await honest.inclusion(3, 20)), cp('cp', note), keys);
    expect(sut.outcome).toBe('tampered');
    expect(sut.lines.join('\n')).toMatch(/altered or forged/);
  });
});

describe('only a signature confirms a proof (contract §10)', () => {
  it('holds an inclusion proof without a checkpoint against its own root: NOT CONFIRMED, or CONSISTENT with --internal-only', async () => {
    const proof = readInclusionProof(await rewritten.inclusion(6, 21));
    const bare = checkInclusionProof(proof, null, []);
    expect(bare.outcome).toBe('unconfirmed');
    expect(bare.lines.join('\n')).toMatch(
      /NOT CONFIRMED: no checkpoint was given \(--checkpoint and --key\)[\s\S]*RESULT: NOT CONFIRMED/,
    );
    expect(bare.lines.join('\n')).not.toMatch(/VERIFIED/);
    const internal = checkInclusionProof(proof, null, [], { internalOnly: true });
    expect(internal.outcome).toBe('consistent');
    expect(internal.lines[internal.lines.length - 1]).toMatch(/^RESULT: CONSISTENT: .*No signature was checked/);
    const altered = { ...proof, proof: proof.proof.slice(1) };
    const forged = checkInclusionProof(altered, null, [], { internalOnly: true });
    expect(forged.outcome).toBe('tampered');
    expect(forged.lines.join('\n')).toMatch(/does not lead from the event's hash to the rootHash its own file names/);
  });

  it('holds a consistency proof against the signed root where a checkpoint is given, and names the side that is not', async () => {
    const proof = readConsistencyProof(await honest.consistency(6, 13));
    expect(checkConsistencyProof(proof, null, null, []).outcome).toBe('unconfirmed');
    expect(checkConsistencyProof(proof, null, null, [], { internalOnly: true }).outcome).toBe('consistent');
    const newOnly = checkConsistencyProof(proof, null, cp('new', honest.checkpoint(13)), keys);
    expect(newOnly.outcome).toBe('unconfirmed');
    expect(newOnly.lines.join('\n')).toMatch(/no checkpoint was given \(--old and --key\): the proof's fromRoot/);
    // A proof from a rewritten history to the signed new root: refused even with one side signed.
    const rewrittenProof = readConsistencyProof(await rewritten.consistency(6, 13));
    const fromOld = checkConsistencyProof(rewrittenProof, cp('old', honest.checkpoint(6)), null, keys);
    expect(fromOld.outcome).toBe('tampered');
  });
});

describe('checkConsistencyProof', () => {
  it('verifies every pair of sizes of an honest chain, 0 and equal sizes included', async () => {
    for (let to = 0; to <= 21; to++) {
      for (let from = 0; from <= to; from++) {
        const sut = checkConsistencyProof(
          readConsistencyProof(await honest.consistency(from, to)),
          cp('old', honest.checkpoint(from)),
          cp('new', honest.checkpoint(to)),
          keys,
        );
        expect([from, to, sut.outcome]).toEqual([from, to, 'verified']);
      }
    }
  });

  it('finds a history rewritten after the old checkpoint, whatever proof the service gives', async () => {
    for (const from of [5, 6, 8, 13]) {
      const old = cp('old', honest.checkpoint(from));
      const newer = cp('new', rewritten.checkpoint(21));
      const served = await rewritten.consistency(from, 21);
      // The proof file may name the signed roots: only the proof's hashes can tell.
      const copiedRoots = { data: { ...served.data, fromRoot: honest.root(from) } };
      for (const proof of [served, copiedRoots, await honest.consistency(from, 21)]) {
        const sut = checkConsistencyProof(readConsistencyProof(proof), old, newer, keys);
        expect(sut.outcome).toBe('tampered');
        expect(sut.lines.join('\n')).toMatch(/does not extend the tree signed at size/);
      }
    }
  });

  it('finds two signed roots for one size (a fork)', async () => {
    const sut = checkConsistencyProof(
      readConsistencyProof(await honest.consistency(9, 9)),
      cp('old', honest.checkpoint(9)),
      cp('new', rewritten.checkpoint(9)),
      keys,
    );
    expect(sut.outcome).toBe('tampered');
  });

  it('cannot confirm a proof made for other sizes than the checkpoints', async () => {
    const sut = checkConsistencyProof(
      readConsistencyProof(await honest.consistency(4, 20)),
      cp('old', honest.checkpoint(4)),
      cp('new', honest.checkpoint(21)),
      keys,
    );
    expect(sut.outcome).toBe('unconfirmed');
  });
});

describe('proof files', () => {
  it('reads the API answer saved as is, or its data alone', async () => {
    const answer = await honest.inclusion(2, 3);
    expect(readInclusionProof(answer)).toEqual(answer.data);
    expect(readInclusionProof(answer.data)).toEqual(answer.data);
  });

  it.each([
    ['a leafIndex that is not position − 1', { leafIndex: 2 }],
    ['a size below the position', { size: 1 }],
    ['an uppercase hash', { eventHash: 'A'.repeat(64) }],
    ['a proof hash of the wrong length', { proof: ['ab'] }],
    ['no proof', { proof: undefined }],
  ])('refuses %s', async (_label, change) => {
    const answer = await honest.inclusion(2, 3);
    expect(() => readInclusionProof({ data: { ...answer.data, ...change } })).toThrow(/not an inclusion proof/);
  });

  it('refuses a consistency proof that goes backwards', async () => {
    const answer = await honest.consistency(2, 3);
    expect(() => readConsistencyProof({ data: { ...answer.data, from: 4 } })).toThrow(/to must be at least from/);
  });
});

describe('cli verify-proof and verify-consistency', () => {
  let dir: string;
  const at = (name: string) => join(dir, name);

  async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await run(args, { out: (s) => (out += s), err: (s) => (err += s), env: {} });
    return { code, out, err };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verify-proof-spec-'));
    writeFileSync(at('inclusion.json'), JSON.stringify(await honest.inclusion(7, 13)));
    writeFileSync(at('forged-inclusion.json'), JSON.stringify(await rewritten.inclusion(7, 13)));
    writeFileSync(at('consistency.json'), JSON.stringify(await honest.consistency(6, 13)));
    writeFileSync(at('rewritten-consistency.json'), JSON.stringify(await rewritten.consistency(6, 13)));
    writeFileSync(at('cp6.txt'), honest.checkpoint(6));
    writeFileSync(at('cp13.txt'), honest.checkpoint(13));
    writeFileSync(at('rewritten-cp13.txt'), rewritten.checkpoint(13));
    writeFileSync(at('key.txt'), `${vkey}\n`);
    writeFileSync(at('not-json.json'), '{"data": ');
    writeFileSync(at('not-a-note.txt'), 'hello\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exits 0 for a verified inclusion proof, with the key inline or from a file', async () => {
    const inline = await cli(['verify-proof', at('inclusion.json'), '--checkpoint', at('cp13.txt'), '--key', vkey]);
    expect(inline).toMatchObject({ code: 0, err: '' });
    expect(inline.out).toMatch(/position 7[\s\S]*RESULT: VERIFIED/);
    const file = await cli([
      'verify-proof',
      at('inclusion.json'),
      '--checkpoint',
      at('cp13.txt'),
      '--key',
      at('key.txt'),
    ]);
    expect(file.code).toBe(0);
  });

  it('exits 1 for an inclusion proof that does not lead to the signed root', async () => {
    const sut = await cli(['verify-proof', at('forged-inclusion.json'), '--checkpoint', at('cp13.txt'), '--key', vkey]);
    expect(sut).toMatchObject({ code: 1, out: like.stringMatching(/RESULT: TAMPERING FOUND/) });
  });

  it('exits 0 for a verified consistency proof and 1 for a rewritten history', async () => {
    const args = ['--old', at('cp6.txt'), '--key', vkey];
    expect(await cli(['verify-consistency', at('consistency.json'), ...args, '--new', at('cp13.txt')])).toMatchObject({
      code: 0,
      out: like.stringMatching(/RESULT: VERIFIED: the chain signed at size 13 extends/),
    });
    const forged = await cli([
      'verify-consistency',
      at('rewritten-consistency.json'),
      ...args,
      '--new',
      at('rewritten-cp13.txt'),
    ]);
    expect(forged).toMatchObject({ code: 1, out: like.stringMatching(/RESULT: TAMPERING FOUND/) });
  });

  it('escapes control characters from the proof file in its report', async () => {
    const proof = await honest.inclusion(7, 13);
    writeFileSync(at('esc.json'), JSON.stringify({ data: { ...proof.data, chainId: 'chn_\u001b[8m' } }));
    const sut = await cli(['verify-proof', at('esc.json'), '--checkpoint', at('cp13.txt'), '--key', vkey]);
    expect(sut.code).toBe(1);
    expect(sut.out).toContain('chn_\\u001b[8m');
    expect(sut.out).not.toContain('\u001b');
  });

  it('exits 1 with the reason without a checkpoint, and 0 for --internal-only saying no signature was checked', async () => {
    for (const args of [
      ['verify-proof', at('inclusion.json')],
      ['verify-proof', at('inclusion.json'), '--key', vkey],
      ['verify-consistency', at('consistency.json'), '--key', vkey],
      ['verify-consistency', at('consistency.json'), '--old', at('cp6.txt'), '--key', vkey],
    ]) {
      const sut = await cli(args);
      expect([args, sut.code]).toEqual([args, 1]);
      expect(sut.out).toMatch(/NOT CONFIRMED: no checkpoint was given[\s\S]*RESULT: NOT CONFIRMED/);
    }
    for (const file of ['inclusion.json', 'consistency.json']) {
      const command = file === 'inclusion.json' ? 'verify-proof' : 'verify-consistency';
      const sut = await cli([command, at(file), '--internal-only']);
      expect(sut).toMatchObject({ code: 0, err: '' });
      expect(sut.out).toMatch(/RESULT: CONSISTENT: .*No signature was checked/);
    }
  });

  it.each([
    ['no key', ['verify-proof', '@inclusion', '--checkpoint', '@cp13']],
    ['--internal-only with a checkpoint', ['verify-proof', '@inclusion', '--internal-only', '--checkpoint', '@cp13']],
    ['--internal-only with a key', ['verify-consistency', '@consistency', '--internal-only', '--key', '@key']],
    ['--old without a key', ['verify-consistency', '@consistency', '--old', '@cp6']],
    ['two proof files', ['verify-proof', '@inclusion', '@inclusion', '--checkpoint', '@cp13', '--key', '@key']],
    ['a missing proof file', ['verify-proof', '/nonexistent/p.json', '--checkpoint', '@cp13', '--key', '@key']],
    ['a proof that is not JSON', ['verify-proof', '@not-json', '--checkpoint', '@cp13', '--key', '@key']],
    [
      'a consistency proof for verify-proof',
      ['verify-proof', '@consistency', '--checkpoint', '@cp13', '--key', '@key'],
    ],
    ['a note that is not a checkpoint', ['verify-proof', '@inclusion', '--checkpoint', '@not-a-note', '--key', '@key']],
    ['a malformed key', ['verify-proof', '@inclusion', '--checkpoint', '@cp13', '--key', 'audit-trail+zz']],
    [
      '--old and --new swapped',
      ['verify-consistency', '@consistency', '--old', '@cp13', '--new', '@cp6', '--key', '@key'],
    ],
    [
      'an inclusion proof for verify-consistency',
      ['verify-consistency', '@inclusion', '--old', '@cp6', '--new', '@cp13', '--key', '@key'],
    ],
  ])('exits 2 for %s', async (_label, args) => {
    const files: Record<string, string> = {
      '@inclusion': 'inclusion.json',
      '@consistency': 'consistency.json',
      '@not-json': 'not-json.json',
      '@not-a-note': 'not-a-note.txt',
      '@cp6': 'cp6.txt',
      '@cp13': 'cp13.txt',
      '@key': 'key.txt',
    };
    const sut = await cli(args.map((a) => (files[a] ? at(files[a]) : a)));
    expect(sut.code).toBe(2);
    expect(sut.err).not.toBe('');
  });
});
