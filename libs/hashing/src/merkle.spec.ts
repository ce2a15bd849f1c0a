import { createHash } from 'node:crypto';
import {
  assemble,
  assembleAll,
  consistencyPlan,
  emptyRoot,
  eventLeafHash,
  extendTree,
  frontierIds,
  inclusionPlan,
  leafHash,
  leafHashOfHex,
  MerkleNode,
  merkleRoot,
  NodeId,
  nodeHash,
  nodePlan,
  NodeReader,
  proveConsistency,
  proveInclusion,
  pushNode,
  rangeNodes,
  resolvePlan,
  resolvePlans,
  rootFromFrontier,
  rootFromInclusionProof,
  rootPlan,
  verifyConsistency,
  verifyInclusion,
} from './merkle';
import { seededRandom as random } from '../../../test/support/seeded-random';

const hex = (h: string): Buffer => Buffer.from(h, 'hex');
const hexes = (b: readonly Buffer[]): string[] => b.map((x) => x.toString('hex'));

/*
 * Published vectors of transparency-dev/merkle (proof/verify_test.go, rfc6962/rfc6962_test.go), the
 * RFC 6962/9162 reference test data also used by Certificate Transparency: eight leaf inputs, the
 * roots of the trees of sizes 1–8 over them, and inclusion and consistency proofs. Their Go test
 * numbers leaves from 1; here indexes are 0-based.
 */
const LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(
  hex,
);
const ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];
const INCLUSION: [index: number, size: number, proof: string[]][] = [
  [0, 1, []],
  [
    0,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    5,
    8,
    [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [2, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [
    1,
    5,
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
];
const CONSISTENCY: [from: number, to: number, proof: string[]][] = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [
    2,
    5,
    [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
  [
    6,
    7,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
];
const SOME_HASH = hex('abacaba000000000000000000000000000000000000000000060061e00123456');

/** Every perfect node of a tree over `leafHashes`, as the service stores them, and a reader of them. */
function storedTree(leafHashes: readonly Buffer[]): { nodes: MerkleNode[]; read: NodeReader; reads: NodeId[][] } {
  const { nodes } = extendTree(0, [], leafHashes);
  const byId = new Map(nodes.map((n) => [`${n.level}/${n.index}`, n.hash]));
  const reads: NodeId[][] = [];
  const read: NodeReader = (ids) => {
    reads.push([...ids]);
    return Promise.resolve(
      ids.map((id) => {
        const hash = byId.get(`${id.level}/${id.index}`);
        if (!hash) throw new Error(`node (${id.level}, ${id.index}) is not stored`);
        return hash;
      }),
    );
  };
  return { nodes, read, reads };
}

const vectorTree = storedTree(LEAVES.map(leafHash));

/** The root of a tree of `size` ≥ 1 leaves from its stored nodes, read as the service reads it (`rootPlan`). */
const storedRoot = async (size: number, read: NodeReader): Promise<Buffer> =>
  (await resolvePlan(rootPlan(size), read))[0]!;

describe('RFC 6962/9162 hashing', () => {
  it('hashes the empty tree, leaves and interior nodes as the published vectors', () => {
    expect(emptyRoot().toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(leafHash(Buffer.alloc(0)).toString('hex')).toBe(
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    );
    expect(leafHash(Buffer.from('L123456')).toString('hex')).toBe(
      '395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56',
    );
    expect(nodeHash(Buffer.from('N123'), Buffer.from('N456')).toString('hex')).toBe(
      'aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb',
    );
  });

  it('hashes 32-byte leaves and nodes as node:crypto does, each into a Buffer of its own', () => {
    const next = random(11);
    const bytes = (): Buffer => Buffer.from(Array.from({ length: 32 }, () => Math.floor(next() * 256)));
    const sha = (...parts: Buffer[]): Buffer => createHash('sha256').update(Buffer.concat(parts)).digest();
    const made: [Buffer, Buffer][] = [];
    for (let i = 0; i < 200; i++) {
      const [a, b] = [bytes(), bytes()];
      made.push([leafHash(a), sha(Buffer.from([0]), a)], [nodeHash(a, b), sha(Buffer.from([1]), a, b)]);
      made.push([leafHashOfHex(a.toString('hex')), sha(Buffer.from([0]), a)]);
    }
    // Checked only after all were made: none is a view of memory a later hash reused.
    for (const [got, want] of made) expect(got).toEqual(want);
  });

  it("hashes an event's leaf as SHA-256(0x00 || the 32 bytes of its hash)", () => {
    const eventHash = '28a03bb8e2932f87c4639cbcd76ed9ff3de51f5951aa18c24b360a53308bba19';
    const expected = createHash('sha256')
      .update(Buffer.concat([Buffer.from([0]), hex(eventHash)]))
      .digest();
    expect(eventLeafHash(eventHash)).toEqual(expected);
    expect(() => eventLeafHash(eventHash.toUpperCase())).toThrow(RangeError);
    expect(() => eventLeafHash(eventHash.slice(2))).toThrow(RangeError);
  });

  it.each(ROOTS.map((root, i) => [i + 1, root]))('gives the published root of the tree of size %d', async (n, root) => {
    const leaves = LEAVES.slice(0, n).map(leafHash);
    expect(merkleRoot(leaves).toString('hex')).toBe(root);
    expect((await storedRoot(n, vectorTree.read)).toString('hex')).toBe(root);
    expect(rootFromFrontier(extendTree(0, [], leaves).frontier).toString('hex')).toBe(root);
  });

  it('gives the empty root for no leaves', () => {
    expect(merkleRoot([])).toEqual(emptyRoot());
    expect(rootFromFrontier([])).toEqual(emptyRoot());
  });
});

describe('inclusion proofs: published vectors', () => {
  it.each(INCLUSION)('generates and verifies leaf %d of %d', async (index, size, proof) => {
    const leaf = leafHash(LEAVES[index]!);
    const root = hex(ROOTS[size - 1]!);
    expect(hexes(await proveInclusion(index, size, vectorTree.read))).toEqual(proof);
    expect(verifyInclusion(index, size, leaf, proof.map(hex), root)).toBe(true);
    expect(rootFromInclusionProof(index, size, leaf, proof.map(hex))).toEqual(root);
  });

  /** transparency-dev/merkle's corruptInclusionProof probes: none of them may verify. */
  it.each(INCLUSION.filter(([, size]) => size > 1))('refuses every corruption of leaf %d of %d', (index, size, p) => {
    const proof = p.map(hex);
    const leaf = leafHash(LEAVES[index]!);
    const root = hex(ROOTS[size - 1]!);
    const flip = (i: number) =>
      proof.map((h, j) => (j === i ? Buffer.from(h.map((b, k) => (k === 0 ? b ^ 8 : b))) : h));
    const probes: [number, number, Buffer, Buffer[], Buffer][] = [
      [index - 1, size, leaf, proof, root],
      [index + 1, size, leaf, proof, root],
      [index ^ 2, size, leaf, proof, root],
      [index, size * 2, leaf, proof, root],
      [index, Math.floor(size / 2), leaf, proof, root],
      [index, size, leafHash(Buffer.from('WrongLeaf')), proof, root],
      [index, size, leaf, proof, emptyRoot()],
      [index, size, leaf, proof, SOME_HASH],
      [index, size, leaf, [...proof, Buffer.alloc(0)], root],
      [index, size, leaf, [...proof, root], root],
      [index, size, leaf, [Buffer.alloc(0), ...proof], root],
      [index, size, leaf, [root, ...proof], root],
      [index, size, leaf, proof.slice(0, -1), root],
      [index, size, leaf, [proof[0]!, SOME_HASH, ...proof.slice(1)], root],
      ...proof.map((_, i): [number, number, Buffer, Buffer[], Buffer] => [index, size, leaf, flip(i), root]),
    ];
    for (const [i, n, l, pr, r] of probes) expect(verifyInclusion(i, n, l, pr, r)).toBe(false);
  });

  it('refuses a single-leaf tree whose leaf or root is wrong or malformed', () => {
    const leaf = leafHash(Buffer.from('data'));
    expect(verifyInclusion(0, 1, leaf, [], leaf)).toBe(true);
    expect(verifyInclusion(0, 1, leaf, [], Buffer.alloc(0))).toBe(false);
    expect(verifyInclusion(0, 1, Buffer.alloc(0), [], leaf)).toBe(false);
    for (const [index, size] of [
      [0, 0],
      [1, 0],
      [2, 1],
      [-1, 1],
      [0.5, 2],
    ])
      expect(verifyInclusion(index!, size!, SOME_HASH, [], emptyRoot())).toBe(false);
  });
});

describe('consistency proofs: published vectors', () => {
  it.each(CONSISTENCY)('generates and verifies %d → %d', async (from, to, proof) => {
    const [oldRoot, newRoot] = [hex(ROOTS[from - 1]!), hex(ROOTS[to - 1]!)];
    expect(hexes(await proveConsistency(from, to, vectorTree.read))).toEqual(proof);
    expect(verifyConsistency(from, to, oldRoot, newRoot, proof.map(hex))).toBe(true);
  });

  /** transparency-dev/merkle's corruptConsistencyProof probes: none of them may verify. */
  it.each(CONSISTENCY.filter(([, , p]) => p.length > 0))('refuses every corruption of %d → %d', (from, to, p) => {
    const proof = p.map(hex);
    const [r1, r2] = [hex(ROOTS[from - 1]!), hex(ROOTS[to - 1]!)];
    const wrong = Buffer.alloc(32, 7);
    const flip = (i: number) =>
      proof.map((h, j) => (j === i ? Buffer.from(h.map((b, k) => (k === 0 ? b ^ 16 : b))) : h));
    const probes: [number, number, Buffer, Buffer, Buffer[]][] = [
      [from - 1, to, r1, r2, proof],
      [from + 1, to, r1, r2, proof],
      [from ^ 2, to, r1, r2, proof],
      [from, to * 2, r1, r2, proof],
      [from, Math.floor(to / 2), r1, r2, proof],
      [from, to, wrong, r2, proof],
      [from, to, r1, wrong, proof],
      [from, to, r2, r1, proof],
      [from, to, r1, r2, []],
      [from, to, r1, r2, [...proof, Buffer.alloc(0)]],
      [from, to, r1, r2, [...proof, r1]],
      [from, to, r1, r2, [...proof, r2]],
      [from, to, r1, r2, [Buffer.alloc(0), ...proof]],
      [from, to, r1, r2, [r1, ...proof]],
      [from, to, r1, r2, [r2, ...proof]],
      [from, to, r1, r2, [proof[0]!, ...proof]],
      [from, to, r1, r2, proof.slice(0, -1)],
      ...proof.map((_, i): [number, number, Buffer, Buffer, Buffer[]] => [from, to, r1, r2, flip(i)]),
    ];
    for (const [m, n, a, b, pr] of probes) expect(verifyConsistency(m, n, a, b, pr)).toBe(false);
  });

  it('treats from = to and from = 0 as trivially consistent, with an empty proof only', () => {
    const [r1, r2] = [hex(ROOTS[0]!), hex(ROOTS[1]!)];
    expect(verifyConsistency(1, 1, r2, r2, [])).toBe(true);
    expect(verifyConsistency(1, 1, r1, r2, [])).toBe(false);
    expect(verifyConsistency(1, 1, r2, r2, [emptyRoot()])).toBe(false);
    expect(verifyConsistency(0, 0, emptyRoot(), emptyRoot(), [])).toBe(true);
    expect(verifyConsistency(0, 5, emptyRoot(), r2, [])).toBe(true);
    expect(verifyConsistency(0, 5, r1, r2, [])).toBe(false);
    expect(verifyConsistency(0, 1, emptyRoot(), r1, [emptyRoot()])).toBe(false);
    expect(verifyConsistency(1, 0, r1, r2, [])).toBe(false);
    expect(verifyConsistency(2, 1, r1, r2, [])).toBe(false);
    expect(verifyConsistency(1, 2, r1, r2, [])).toBe(false);
  });
});

/*
 * Which stored nodes a proof reads: transparency-dev/merkle's proof_test.go lists them for the
 * RFC 6962 example tree (nodes a…l below; its "rehash" ranges are one proof element made of
 * several nodes, listed there right to left and here left to right).
 *
 *                hash              <== Level 3
 *          k              l        <== Level 2
 *      g       h      i      [ ]   <== Level 1
 *     a b     c d    e f    j      <== Level 0
 */
describe('proof plans: the stored nodes a proof needs', () => {
  const ids = (plan: { nodes: NodeId[] }) => plan.nodes.map(({ level, index }) => [level, index]);

  it.each<[number, number, number[][]]>([
    [0, 1, []],
    [0, 2, [[0, 1]]],
    [
      1,
      3,
      [
        [0, 0],
        [0, 2],
      ],
    ],
    [
      0,
      7,
      [
        [0, 1],
        [1, 1],
        [1, 2],
        [0, 6],
      ],
    ],
    [
      2,
      7,
      [
        [0, 3],
        [1, 0],
        [1, 2],
        [0, 6],
      ],
    ],
    [
      4,
      7,
      [
        [0, 5],
        [0, 6],
        [2, 0],
      ],
    ],
    [
      6,
      7,
      [
        [1, 2],
        [2, 0],
      ],
    ],
    [
      2,
      4,
      [
        [0, 3],
        [1, 0],
      ],
    ],
    [
      3,
      5,
      [
        [0, 2],
        [1, 0],
        [0, 4],
      ],
    ],
    [
      4,
      6,
      [
        [0, 5],
        [2, 0],
      ],
    ],
    [
      10,
      15,
      [
        [0, 11],
        [1, 4],
        [1, 6],
        [0, 14],
        [3, 0],
      ],
    ],
    [
      24,
      31,
      [
        [0, 25],
        [1, 13],
        [1, 14],
        [0, 30],
        [3, 2],
        [4, 0],
      ],
    ],
    [
      81,
      95,
      [
        [0, 80],
        [1, 41],
        [2, 21],
        [2, 22],
        [1, 46],
        [0, 94],
        [4, 4],
        [6, 0],
      ],
    ],
  ])('inclusion of leaf %d in %d', (index, size, expected) => {
    expect(ids(inclusionPlan(index, size))).toEqual(expected);
  });

  it.each<[number, number, number[][]]>([
    [1, 2, [[0, 1]]],
    [
      1,
      4,
      [
        [0, 1],
        [1, 1],
      ],
    ],
    [
      1,
      6,
      [
        [0, 1],
        [1, 1],
        [1, 2],
      ],
    ],
    [2, 3, [[0, 2]]],
    [
      2,
      8,
      [
        [1, 1],
        [2, 1],
      ],
    ],
    [
      3,
      7,
      [
        [0, 2],
        [0, 3],
        [1, 0],
        [1, 2],
        [0, 6],
      ],
    ],
    [
      4,
      7,
      [
        [1, 2],
        [0, 6],
      ],
    ],
    [
      5,
      7,
      [
        [0, 4],
        [0, 5],
        [0, 6],
        [2, 0],
      ],
    ],
    [
      6,
      7,
      [
        [1, 2],
        [0, 6],
        [2, 0],
      ],
    ],
    [
      7,
      8,
      [
        [0, 6],
        [0, 7],
        [1, 2],
        [2, 0],
      ],
    ],
    [3, 3, []],
    [8, 8, []],
    [0, 8, []],
    [2, 4, [[1, 1]]],
    [
      3,
      5,
      [
        [0, 2],
        [0, 3],
        [1, 0],
        [0, 4],
      ],
    ],
    [
      3,
      6,
      [
        [0, 2],
        [0, 3],
        [1, 0],
        [1, 2],
      ],
    ],
    [4, 6, [[1, 2]]],
    [
      1,
      7,
      [
        [0, 1],
        [1, 1],
        [1, 2],
        [0, 6],
      ],
    ],
    [
      10,
      15,
      [
        [1, 4],
        [1, 5],
        [1, 6],
        [0, 14],
        [3, 0],
      ],
    ],
    [
      24,
      31,
      [
        [3, 2],
        [2, 6],
        [1, 14],
        [0, 30],
        [4, 0],
      ],
    ],
    [
      81,
      95,
      [
        [0, 80],
        [0, 81],
        [1, 41],
        [2, 21],
        [2, 22],
        [1, 46],
        [0, 94],
        [4, 4],
        [6, 0],
      ],
    ],
  ])('consistency %d → %d', (from, to, expected) => {
    expect(ids(consistencyPlan(from, to))).toEqual(expected);
  });

  it('reads every node of a proof in one call, O(log n) of them', async () => {
    const leaves = Array.from({ length: 1000 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    const { read, reads } = storedTree(leaves);
    await proveInclusion(777, 999, read);
    await proveConsistency(500, 999, read);
    expect(reads).toHaveLength(2);
    for (const r of reads) expect(r.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(1000)));
  });

  it('resolvePlans reads the nodes of several plans in one call, each once, and answers each plan as resolvePlan would', async () => {
    const leaves = Array.from({ length: 1000 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    const { read, reads } = storedTree(leaves);
    const plans = [
      rootPlan(999),
      nodePlan({ level: 0, index: 998 }),
      consistencyPlan(500, 999),
      inclusionPlan(777, 999),
      nodePlan({ level: 1, index: 3 }),
    ];
    const together = await resolvePlans(plans, read);
    expect(reads).toHaveLength(1);
    const keys = reads[0]!.map(({ level, index }) => `${level}/${index}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(keys)).toEqual(
      new Set(plans.flatMap((p) => p.nodes.map(({ level, index }) => `${level}/${index}`))),
    );
    expect(keys.length).toBeLessThan(plans.reduce((n, p) => n + p.nodes.length, 0)); // the plans share nodes
    expect(together).toEqual(await Promise.all(plans.map((plan) => resolvePlan(plan, read))));
    expect(together[0]).toEqual([merkleRoot(leaves.slice(0, 999))]);
    expect(together[1]).toEqual([leaves[998]]);
    expect(together[4]).toEqual([nodeHash(leaves[6]!, leaves[7]!)]);
    reads.length = 0;
    expect(await resolvePlans([consistencyPlan(0, 5), consistencyPlan(5, 5)], read)).toEqual([[], []]);
    expect(reads).toHaveLength(0);
  });

  it('assembleAll answers several plans from their nodes read together, shared ones repeated', async () => {
    const leaves = Array.from({ length: 300 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
    const { read } = storedTree(leaves);
    const plans = [consistencyPlan(100, 299), rootPlan(100), rootPlan(299), inclusionPlan(7, 299)];
    const hashes = await read(plans.flatMap((plan) => plan.nodes));
    expect(assembleAll(plans, hashes)).toEqual(await Promise.all(plans.map((plan) => resolvePlan(plan, read))));
    expect(assembleAll([], [])).toEqual([]);
    expect(() => assembleAll(plans, hashes.slice(1))).toThrow(RangeError);
  });

  it('refuses impossible requests', () => {
    expect(() => inclusionPlan(0, 0)).toThrow(RangeError);
    expect(() => inclusionPlan(7, 7)).toThrow(RangeError);
    expect(() => inclusionPlan(-1, 7)).toThrow(RangeError);
    expect(() => consistencyPlan(5, 0)).toThrow(RangeError);
    expect(() => consistencyPlan(9, 8)).toThrow(RangeError);
    expect(() => rootPlan(0)).toThrow(RangeError);
    expect(() => nodePlan({ level: 0, index: -1 })).toThrow(RangeError);
    expect(() => nodePlan({ level: -1, index: 0 })).toThrow(RangeError);
    expect(() => nodePlan({ level: 63, index: 0 })).toThrow(RangeError);
    expect(() => nodePlan({ level: 0.5, index: 0 })).toThrow(RangeError);
    expect(() => rangeNodes(2, 5)).toThrow(RangeError);
    expect(() => rangeNodes(3, 3)).toThrow(RangeError);
    expect(() => assemble(rootPlan(3), [])).toThrow(RangeError);
  });
});

/*
 * Go's checksum-database implementation (golang.org/x/mod/sumdb/tlog v0.7.0), an RFC 6962 tree
 * independent of ours, over the records of its own TestTree ("leaf 0" … "leaf 99"): TreeHash,
 * ProveRecord(t, n) and ProveTree(t, n) as it printed them.
 */
describe("Go's sumdb/tlog on its TestTree records", () => {
  const leaves = Array.from({ length: 100 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
  const stored = storedTree(leaves);
  const TREE_HASH: [number, string][] = [
    [1, '1bb97dcc21635d47e2663efdfd0a174686d98dd701352dd2cd06e8b43fd3d305'],
    [2, 'fc5f6b88ff8554f75bb2f9e6f39c31b1936d44b69276edf7b1205a955b9761e3'],
    [3, 'd4f92c8fbb89720eb3b55677c7d7efaddfeb10d11a1a84a0ba8f1a23337faa95'],
    [37, 'fc7b735d548ead0e7fbe91c9b7f6570e0d75e1b692dab8bba0677b1dfe9c34bd'],
    [64, 'f261e23692d978fdac3fd949db5495940a437ae671b9a6dde9aa6118d003652f'],
    [100, '13f88915c560dc911a1da0fb209d84a20971051f294ebeb428fb3fc293af2743'],
  ];
  const PROVE_RECORD: [size: number, index: number, proof: string[]][] = [
    [
      100,
      42,
      [
        '32d64849aff7d00c1c08cfc35f72fdd37ae41ad04c50d3d0a222ce9d52f780c9',
        '1d095f160a033f08d9e88a1881158adbe3804e06035a89339b4f0ae03d6dade5',
        '054a7850436f0d0590ade3ab2f45f5f87d858c4ba3514da6b8fa1c08ab0f22e1',
        'df70a81a4366cbfdc3e47d887923dce9b019bc477d65604bd9edde0bc397c132',
        '9c494a6f5b1ef22d42f0509f45936b8a5c05e8ea06bef8b42324f15fd52c97d6',
        '9a5b5a2a29571cad3d81555f34bf3256fda56279691cdec34f57c8f484acb3fa',
        '5b0f079a0616e900406d4765bc00c474b42d19cdcfb3f42cebbf102a7c2407fc',
      ],
    ],
    [
      37,
      36,
      [
        '5be77b8ca4dbee84c59ad0bccb17d56c733750d0a6d1b780de3d8e969dd03162',
        '9a5b5a2a29571cad3d81555f34bf3256fda56279691cdec34f57c8f484acb3fa',
      ],
    ],
    [
      64,
      0,
      [
        'cb5a3ce862c3e321f3f7df6d2690549e936a8e377135aae9f3d69f691f547d5b',
        '4f7494071ca382a5c5067cc41077a999fd7722e06a26aa9de771be933dc1021d',
        'c3e6b3b91f3a13b9a4270b2cd911623abb3a7a855af5e6e4b71c84f990cdc469',
        'a800a9786c988ce79d32396a32d94a7eabce331b32aa4db237159bbf94c532fe',
        '86772b5aa3dad91a776125e544e79daf3a54bb0d7875133165fc9ab6fc4869b7',
        '91aea861490a4db1c47a565c05829371aeb2f7bb8655d7b3eb17aae18b6fdce1',
      ],
    ],
  ];
  const PROVE_TREE: [size: number, from: number, proof: string[]][] = [
    [
      100,
      37,
      [
        'b34889394564290c00c6cc7d5043d5e3c2199484c301c1182af346758ddf11b4',
        '900236987394e2df5f1f854ca103f6dbe60ca7c150f09441412abb9a95d25784',
        '3859110b621ad9bbcc94faecba692aaf8e5acb7db15d1aa41a6aa4e2698a2069',
        '5be77b8ca4dbee84c59ad0bccb17d56c733750d0a6d1b780de3d8e969dd03162',
        '20543b8da96c920043be4aa8a1a707dfa0724436760fba563c344e2fdc30a885',
        '9c494a6f5b1ef22d42f0509f45936b8a5c05e8ea06bef8b42324f15fd52c97d6',
        '9a5b5a2a29571cad3d81555f34bf3256fda56279691cdec34f57c8f484acb3fa',
        '5b0f079a0616e900406d4765bc00c474b42d19cdcfb3f42cebbf102a7c2407fc',
      ],
    ],
    [
      64,
      63,
      [
        '296607324003af86aac6ecc17580d7527a6a1ecf757dde5eeb43a23c2d79933d',
        '67c51b589f764e412d72c713bbea448856106a1a8deda128c0d27ae3b09d1ac6',
        '9325a4e178413fda87ac2710d72961014335ddc23727f615675447f3790da1f7',
        'f0d373fdec323db7e0f3aac62277c92bc4d5af26657ebbadc4f69414c9accc9c',
        '1c16c7703f49073477b26b2cdedc519ab06f646bc427833236c099842a946710',
        '19071af26ede5afe9597f41d0be63fbc03fd42b05afe5cef5a2517a8160e7316',
        '9a5b5a2a29571cad3d81555f34bf3256fda56279691cdec34f57c8f484acb3fa',
      ],
    ],
    [100, 64, ['5b0f079a0616e900406d4765bc00c474b42d19cdcfb3f42cebbf102a7c2407fc']],
  ];

  it.each(TREE_HASH)('gives TreeHash(%d)', async (n, root) => {
    expect((await storedRoot(n, stored.read)).toString('hex')).toBe(root);
  });

  it.each(PROVE_RECORD)('gives ProveRecord(%d, %d)', async (size, index, proof) => {
    expect(hexes(await proveInclusion(index, size, stored.read))).toEqual(proof);
  });

  it.each(PROVE_TREE)('gives ProveTree(%d, %d)', async (size, from, proof) => {
    expect(hexes(await proveConsistency(from, size, stored.read))).toEqual(proof);
    expect(
      verifyConsistency(
        from,
        size,
        merkleRoot(leaves.slice(0, from)),
        merkleRoot(leaves.slice(0, size)),
        proof.map(hex),
      ),
    ).toBe(true);
  });
});

/* ---- Property tests against RFC 6962 §2.1's recursive definitions (MTH, PATH, PROOF/SUBPROOF). ---- */

/** RFC 6962 §2.1 taken literally, over leaf hashes D (MTH of one leaf is its leaf hash). */
class Reference {
  private readonly memo = new Map<string, Buffer>();
  constructor(readonly leaves: readonly Buffer[]) {}

  private static k(n: number): number {
    let k = 1;
    while (k * 2 < n) k *= 2;
    return k;
  }

  /** MTH(D[lo:hi]) */
  mth(lo: number, hi: number): Buffer {
    if (hi - lo === 1) return this.leaves[lo]!;
    const key = `${lo}:${hi}`;
    let h = this.memo.get(key);
    if (!h) {
      const k = Reference.k(hi - lo);
      h = nodeHash(this.mth(lo, lo + k), this.mth(lo + k, hi));
      this.memo.set(key, h);
    }
    return h;
  }

  /** PATH(m, D[lo:hi]), m relative to lo */
  path(m: number, lo: number, hi: number): Buffer[] {
    if (hi - lo === 1) return [];
    const k = Reference.k(hi - lo);
    return m < k
      ? [...this.path(m, lo, lo + k), this.mth(lo + k, hi)]
      : [...this.path(m - k, lo + k, hi), this.mth(lo, lo + k)];
  }

  /** PROOF(m, D[0:n]) = SUBPROOF(m, D[0:n], true) */
  proof(m: number, n: number): Buffer[] {
    return this.subproof(m, 0, n, true);
  }

  private subproof(m: number, lo: number, hi: number, b: boolean): Buffer[] {
    if (m === hi - lo) return b ? [] : [this.mth(lo, hi)];
    const k = Reference.k(hi - lo);
    return m <= k
      ? [...this.subproof(m, lo, lo + k, b), this.mth(lo + k, hi)]
      : [...this.subproof(m - k, lo + k, hi, false), this.mth(lo, lo + k)];
  }
}

describe('property: against the recursive definition, on random trees of up to 300 leaves', () => {
  const SEED = 20261122;
  const next = random(SEED);
  const leafData = Array.from({ length: 300 }, () =>
    Buffer.from(Array.from({ length: Math.floor(next() * 40) }, () => Math.floor(next() * 256))),
  );
  const leaves = leafData.map(leafHash);
  const ref = new Reference(leaves);
  const stored = storedTree(leaves);

  it('stores exactly the perfect subtrees, each with its MTH', () => {
    const expected = new Map<string, Buffer>();
    for (let level = 0; 2 ** level <= 300; level++)
      for (let i = 0; (i + 1) * 2 ** level <= 300; i++)
        expected.set(`${level}/${i}`, ref.mth(i * 2 ** level, (i + 1) * 2 ** level));
    expect(new Map(stored.nodes.map((n) => [`${n.level}/${n.index}`, n.hash]))).toEqual(expected);
    expect(stored.nodes).toHaveLength(expected.size);
  });

  it('gives MTH for every size 1–300, from stored nodes and from leaves', async () => {
    for (let n = 1; n <= 300; n++) {
      const want = ref.mth(0, n);
      expect(await storedRoot(n, stored.read)).toEqual(want);
      expect(merkleRoot(leaves.slice(0, n))).toEqual(want);
    }
  });

  it('generates PATH for every leaf of every size up to 128 and 3,000 random (m, n) up to 300; all verify', async () => {
    const pairs: [number, number][] = [];
    for (let n = 1; n <= 128; n++) for (let m = 0; m < n; m++) pairs.push([m, n]);
    for (let i = 0; i < 3000; i++) {
      const n = 1 + Math.floor(next() * 300);
      pairs.push([Math.floor(next() * n), n]);
    }
    const failed: string[] = [];
    for (const [m, n] of pairs) {
      const proof = await proveInclusion(m, n, stored.read);
      if (hexes(proof).join() !== hexes(ref.path(m, 0, n)).join()) failed.push(`PATH(${m}, ${n})`);
      if (!verifyInclusion(m, n, leaves[m]!, proof, ref.mth(0, n))) failed.push(`verify (${m}, ${n})`);
    }
    expect(failed).toEqual([]);
  });

  it('generates PROOF for every 0 < m ≤ n ≤ 128 and 3,000 random (m, n) up to 300; all verify', async () => {
    const pairs: [number, number][] = [];
    for (let n = 1; n <= 128; n++) for (let m = 1; m <= n; m++) pairs.push([m, n]);
    for (let i = 0; i < 3000; i++) {
      const n = 1 + Math.floor(next() * 300);
      pairs.push([1 + Math.floor(next() * n), n]);
    }
    const failed: string[] = [];
    for (const [m, n] of pairs) {
      const proof = await proveConsistency(m, n, stored.read);
      if (hexes(proof).join() !== hexes(ref.proof(m, n)).join()) failed.push(`PROOF(${m}, ${n})`);
      if (!verifyConsistency(m, n, ref.mth(0, m), ref.mth(0, n), proof)) failed.push(`verify (${m}, ${n})`);
    }
    expect(failed).toEqual([]);
  });

  it('refuses a proof with any one bit flipped, or against a neighbouring size', async () => {
    for (let i = 0; i < 300; i++) {
      const n = 2 + Math.floor(next() * 299);
      const m = 1 + Math.floor(next() * (n - 1));
      const proof = await proveConsistency(m, n, stored.read);
      const at = Math.floor(next() * proof.length);
      const bit = 1 << Math.floor(next() * 8);
      const bad = proof.map((h, j) => (j === at ? Buffer.from(h.map((b, k) => (k === 31 ? b ^ bit : b))) : h));
      expect(verifyConsistency(m, n, ref.mth(0, m), ref.mth(0, n), bad)).toBe(false);
      if (m > 1) expect(verifyConsistency(m, n, ref.mth(0, m - 1), ref.mth(0, n), proof)).toBe(false);
      const incl = await proveInclusion(m, n, stored.read);
      if (incl.length > 0) {
        const flipped = incl.map((h, j) => (j === 0 ? Buffer.from(h.map((b, k) => (k === 0 ? b ^ bit : b))) : h));
        expect(verifyInclusion(m, n, leaves[m]!, flipped, ref.mth(0, n))).toBe(false);
      }
      expect(verifyInclusion(m, n, leaves[m]!, incl, ref.mth(0, n - 1))).toBe(false);
    }
  });
});

describe('extendTree: the new perfect nodes when leaves are appended', () => {
  const leaves = Array.from({ length: 300 }, (_, i) => leafHash(Buffer.from(`event ${i}`)));
  const ref = new Reference(leaves);

  it('names the frontier of a tree: the perfect subtrees of its right edge', () => {
    expect(frontierIds(0)).toEqual([]);
    expect(frontierIds(1)).toEqual([{ level: 0, index: 0 }]);
    expect(frontierIds(6)).toEqual([
      { level: 2, index: 0 },
      { level: 1, index: 2 },
    ]);
    expect(frontierIds(7)).toEqual([
      { level: 2, index: 0 },
      { level: 1, index: 2 },
      { level: 0, index: 6 },
    ]);
    expect(frontierIds(8)).toEqual([{ level: 3, index: 0 }]);
  });

  it('adds the leaf hashes at level 0 and every parent that became perfect, children first', () => {
    const { frontier } = extendTree(0, [], leaves.slice(0, 3));
    const sut = extendTree(3, frontier, [leaves[3]!, leaves[4]!]);
    expect(sut.nodes.map(({ level, index }) => [level, index])).toEqual([
      [0, 3],
      [1, 1],
      [2, 0],
      [0, 4],
    ]);
    expect(sut.nodes[2]!.hash).toEqual(ref.mth(0, 4));
    expect(sut.frontier.map(({ level, index }) => [level, index])).toEqual([
      [2, 0],
      [0, 4],
    ]);
  });

  it('builds, in random batches from stored frontiers, the same nodes as MTH of every perfect subtree', () => {
    const next = random(7);
    for (let run = 0; run < 8; run++) {
      const all = new Map<string, Buffer>();
      let size = 0;
      let frontier: MerkleNode[] = [];
      while (size < 300) {
        const batch = Math.min(300 - size, 1 + Math.floor(next() * 40));
        const out = extendTree(size, frontier, leaves.slice(size, size + batch));
        for (const n of out.nodes) {
          const key = `${n.level}/${n.index}`;
          if (all.has(key)) throw new Error(`node ${key} produced twice`);
          all.set(key, n.hash);
        }
        size += batch;
        // What the service does: read the frontier back from what it stored.
        frontier = frontierIds(size).map((id) => ({ ...id, hash: all.get(`${id.level}/${id.index}`)! }));
        expect(frontier).toEqual(out.frontier);
        expect(rootFromFrontier(frontier)).toEqual(ref.mth(0, size));
      }
      const wrong = [...all].filter(([key, hash]) => {
        const [level, index] = key.split('/').map(Number) as [number, number];
        return !hash.equals(ref.mth(index * 2 ** level, (index + 1) * 2 ** level));
      });
      expect(wrong).toEqual([]);
      expect(all.size).toBe(extendTree(0, [], leaves).nodes.length);
    }
  });

  it('refuses a frontier that is not the one of the given size', () => {
    const { frontier } = extendTree(0, [], leaves.slice(0, 6));
    expect(() => extendTree(7, frontier, [leaves[7]!])).toThrow(RangeError);
    expect(() => extendTree(6, frontier.slice(1), [leaves[6]!])).toThrow(RangeError);
    expect(() => extendTree(0, frontier, [])).toThrow(RangeError);
  });
});

describe('pushNode: the push/merge step of every tree built leaf by leaf', () => {
  const leaves = Array.from({ length: 70 }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
  const ref = new Reference(leaves);
  const ids = (nodes: readonly NodeId[]): [number, number][] => nodes.map(({ level, index }) => [level, index]);

  it('merges a node with the top only while the top is its left sibling, and names each parent made', () => {
    const stack: MerkleNode[] = [];
    const made: MerkleNode[] = [];
    for (let i = 3; i < 8; i++) pushNode(stack, { level: 0, index: i, hash: leaves[i]! }, (n) => made.push(n));
    // Leaf 3 is a right child: leaf 4 lands beside it, not on it.
    expect(ids(stack)).toEqual([
      [0, 3],
      [2, 1],
    ]);
    expect(ids(made)).toEqual([
      [1, 2],
      [1, 3],
      [2, 1],
    ]);
    expect(stack[1]!.hash).toEqual(ref.mth(4, 8));
    expect(made.map((n) => n.hash)).toEqual([ref.mth(4, 6), ref.mth(6, 8), ref.mth(4, 8)]);
  });

  it('leaves the maximal perfect subtrees of any run of leaves [a, b), having made each inner one once', () => {
    const failed: string[] = [];
    const key = (n: NodeId): string => `${n.level}/${n.index}`;
    for (let a = 0; a < 40; a++) {
      for (let b = a + 1; b <= 70; b++) {
        const stack: MerkleNode[] = [];
        const made: MerkleNode[] = [];
        for (let i = a; i < b; i++) pushNode(stack, { level: 0, index: i, hash: leaves[i]! }, (n) => made.push(n));
        // Greedy from the left: at each point the largest aligned perfect subtree that fits.
        const want: string[] = [];
        for (let at = a; at < b;) {
          let level = 0;
          while (at % 2 ** (level + 1) === 0 && at + 2 ** (level + 1) <= b) level++;
          want.push(key({ level, index: at / 2 ** level }));
          at += 2 ** level;
        }
        const inner: string[] = [];
        for (let level = 1; 2 ** level <= b - a; level++)
          for (let i = Math.ceil(a / 2 ** level); (i + 1) * 2 ** level <= b; i++) inner.push(key({ level, index: i }));
        const wrongHash = [...stack, ...made].some(
          (n) => !n.hash.equals(ref.mth(n.index * 2 ** n.level, (n.index + 1) * 2 ** n.level)),
        );
        if (stack.map(key).join() !== want.join()) failed.push(`stack of [${a}, ${b})`);
        if (made.map(key).sort().join() !== inner.sort().join()) failed.push(`made of [${a}, ${b})`);
        if (wrongHash) failed.push(`hashes of [${a}, ${b})`);
      }
    }
    expect(failed).toEqual([]);
  });

  it('grows a frontier of size n into the frontier of size n + 1', () => {
    const stack: MerkleNode[] = [];
    for (let n = 0; n < 70; n++) {
      expect(ids(stack)).toEqual(ids(frontierIds(n)));
      expect(rootFromFrontier(stack)).toEqual(n === 0 ? emptyRoot() : ref.mth(0, n));
      pushNode(stack, { level: 0, index: n, hash: leaves[n]! });
    }
  });
});

describe('leafHashOfHex', () => {
  it('is leafHash of the decoded bytes, for well-formed and malformed hex alike', () => {
    for (const hex of ['00'.repeat(32), 'ab'.repeat(32), 'f'.repeat(64), 'zz'.repeat(32), 'ab', ''])
      expect(leafHashOfHex(hex)).toEqual(leafHash(Buffer.from(hex, 'hex')));
  });
});
