import { Db, EventRecord, MerkleNodesRepository } from '@app/database';
import { eventLeafHash, extendTree, MerkleNode } from '@app/hashing';
import { ChainTrees } from './chain-trees';

const hashOf = (chain: string, position: number): string => Buffer.alloc(32, `${chain}${position}`).toString('hex');
const event = (chainId: string, position: number) =>
  ({ chainId, position, hash: hashOf(chainId, position) }) as EventRecord;

/** The trees of chains a (2 events stored), b (none) and c (5), in memory, behind the repository's two calls. */
function setup() {
  const stored = new Map<string, MerkleNode[]>();
  const sizes = { a: 2, b: 0, c: 5 } as Record<string, number>;
  for (const [chain, size] of Object.entries(sizes))
    stored.set(
      chain,
      extendTree(
        0,
        [],
        Array.from({ length: size }, (_, i) => eventLeafHash(hashOf(chain, i + 1))),
      ).frontier,
    );
  const calls: string[] = [];
  const inserted: (MerkleNode & { chainId: string })[] = [];
  const repository = {
    frontiers: (asked: ReadonlyMap<string, number>) => {
      calls.push(`frontiers ${[...asked].map(([c, s]) => `${c}:${s}`).join(',')}`);
      return Promise.resolve(new Map([...asked.keys()].map((c) => [c, stored.get(c)!])));
    },
    insertStatement: (trees: { chainId: string; nodes: MerkleNode[] }[]) => {
      calls.push('insertStatement');
      for (const { chainId, nodes } of trees) inserted.push(...nodes.map((node) => ({ chainId, ...node })));
      return { text: 'INSERT', values: [] };
    },
  } as unknown as MerkleNodesRepository;
  return { sut: new ChainTrees(repository), calls, inserted, sizes };
}

describe('ChainTrees', () => {
  it('reads every touched frontier with one call and gives one statement for every new node of every chain', async () => {
    const { sut, calls, inserted } = setup();
    const events = [event('c', 6), event('a', 3), event('b', 1), event('a', 4), event('c', 7), event('a', 5)];
    expect(await sut.grow(events, {} as Db)).toEqual({ text: 'INSERT', values: [] });
    expect(calls).toEqual(['frontiers c:5,a:2,b:0', 'insertStatement']);
    for (const [chain, from, to] of [
      ['a', 2, 5],
      ['b', 0, 1],
      ['c', 5, 7],
    ] as const) {
      const all = Array.from({ length: to }, (_, i) => eventLeafHash(hashOf(chain, i + 1)));
      const before = extendTree(0, [], all.slice(0, from));
      const expected = extendTree(from, before.frontier, all.slice(from)).nodes;
      expect(inserted.filter((n) => n.chainId === chain)).toEqual(expected.map((n) => ({ chainId: chain, ...n })));
    }
  });

  it('does nothing for no events', async () => {
    const { sut, calls } = setup();
    expect(await sut.grow([], {} as Db)).toBeNull();
    expect(calls).toEqual([]);
  });
  it('remembers the frontier it left: the next append at that head reads none, another head reads it', async () => {
    const { sut, calls, inserted } = setup();
    const next = (chainId: string, position: number, previousHash = hashOf(chainId, position - 1)) => ({
      ...event(chainId, position),
      previousHash,
    });
    await sut.grow([next('a', 3), next('a', 4)], {} as Db);
    await sut.grow([next('a', 5), next('c', 6)], {} as Db);
    await sut.grow([next('a', 6)], {} as Db);
    // Chain a moved on elsewhere (an appender outside this instance): its head is not the remembered one.
    await sut.grow([next('a', 9, 'e'.repeat(64))], {} as Db).catch(() => undefined);
    expect(calls).toEqual([
      'frontiers a:2',
      'insertStatement',
      'frontiers c:5',
      'insertStatement',
      'insertStatement',
      'frontiers a:8',
    ]);
    const leaves = Array.from({ length: 6 }, (_, i) => eventLeafHash(hashOf('a', i + 1)));
    const key = (n: { level: number; index: number; hash: Buffer }) =>
      `${n.level}/${n.index}/${n.hash.toString('hex')}`;
    const before = new Set(extendTree(0, [], leaves.slice(0, 2)).nodes.map(key));
    const expected = extendTree(0, [], leaves)
      .nodes.map(key)
      .filter((k) => !before.has(k));
    expect(
      inserted
        .filter((n) => n.chainId === 'a')
        .map(key)
        .sort(),
    ).toEqual(expected.sort());
  });
});
