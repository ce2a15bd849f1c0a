import { createHash } from 'node:crypto';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { ulid } from 'ulid';
import {
  eventLeafHash,
  extendTree,
  frontierIds,
  LOWEST_STORED_LEVEL,
  MerkleNode,
  merkleRoot,
  NodeReader,
  proveConsistency,
  proveInclusion,
  resolvePlan,
  rootPlan,
  verifyConsistency,
  verifyInclusion,
} from '@app/hashing';
import { MerkleNodesRepository, merkleNodeAt } from '@app/database';
import { MerkleNodes1764100000000 } from '@app/database/migrations/1764100000000-merkle-nodes';
import { MerkleNodesWithoutFk1764200000000 } from '@app/database/migrations/1764200000000-merkle-nodes-without-fk';
import { MerkleLeavesFromEvents1764300000000 } from '@app/database/migrations/1764300000000-merkle-leaves-from-events';
import { MerklePairsFromEvents1764400000000 } from '@app/database/migrations/1764400000000-merkle-pairs-from-events';
import { BinaryHashes1765300000000 } from '@app/database/migrations/1765300000000-binary-hashes';
import { ChainPositionLookups1765700000000 } from '@app/database/migrations/1765700000000-chain-position-lookups';
import { attemptSql, Sql } from './support/raw-sql';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';
import { BinaryIds1765900000000 } from '@app/database/migrations/1765900000000-binary-ids';
import { ActionSchemas1766200000000 } from '@app/database/migrations/1766200000000-action-schemas';

/**
 * merkle_nodes (migrations 1764100000000–1764400000000): the backfill of existing chains' trees,
 * the repository (levels ≥ 2 stored, those below read from the events) and the append-only triggers, on
 * the real database. Events are appended through the API; the tree expected is computed
 * independently from the exported event hashes.
 */
describe('merkle_nodes', () => {
  let t: TestApp;
  let repository: MerkleNodesRepository;
  beforeAll(async () => {
    t = await startTestApp();
    repository = t.app.get(MerkleNodesRepository);
  });
  afterAll(async () => {
    await t.close();
  });

  interface Exported {
    hash: string;
    chain: { id: string; name: string; position: number };
  }

  /** Every exported event of the key's account, grouped by chain, in position order. */
  async function exportedChains(key: string): Promise<Map<string, string[]>> {
    const res = await t
      .http()
      .get('/v1/events/export?format=json&after=2000-01-01T00:00:00.000Z&before=2999-01-01T00:00:00.000Z')
      .set(...bearer(key))
      .expect(200);
    const chains = new Map<string, string[]>();
    for (const e of (res.body as { data: Exported[] }).data) {
      const hashes = chains.get(e.chain.id) ?? [];
      hashes[e.chain.position - 1] = e.hash;
      chains.set(e.chain.id, hashes);
    }
    return chains;
  }

  /** Runs the tree's migrations' own downs and ups: the table rebuilt from the events, as on an existing database. */
  async function rerunMigrations(): Promise<void> {
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const migrations = [
        new MerkleNodes1764100000000(),
        new MerkleNodesWithoutFk1764200000000(),
        new MerkleLeavesFromEvents1764300000000(),
        new MerklePairsFromEvents1764400000000(),
      ];
      // They read the hashes as the hex text they were then: undone around them (migration 1765300000000,
      // and 1765700000000, which replaces a function 1765300000000 restores), and the chain ids as the
      // text they were then (1765900000000: their foreign key is made again).
      const binaryHashes = new BinaryHashes1765300000000();
      const lookups = new ChainPositionLookups1765700000000();
      const binaryIds = new BinaryIds1765900000000();
      // The action schemas' table refers to the accounts' binary ids: undone around 1765900000000.
      const actionSchemas = new ActionSchemas1766200000000();
      await actionSchemas.down(runner);
      await binaryIds.down(runner);
      await lookups.down(runner);
      await binaryHashes.down(runner);
      for (const migration of [...migrations].reverse()) await migration.down(runner);
      for (const migration of migrations) await migration.up(runner);
      await binaryHashes.up(runner);
      await lookups.up(runner);
      await binaryIds.up(runner);
      await actionSchemas.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
  }

  async function storedNodes(chainId: string): Promise<string[]> {
    const rows = await t.dataSource.query<{ level: number; index: string; hash: string }[]>(
      `SELECT level, "index"::text AS index, encode(hash, 'hex') AS hash FROM merkle_nodes WHERE chain_id = audit_ulid_uuid($1)`,
      [chainId],
    );
    return rows.map((r) => `${r.level}/${r.index}/${r.hash}`).sort();
  }

  /** What a database stores of the tree extendTree builds: its nodes above the leaves. */
  const storedOf = (nodes: readonly MerkleNode[]): string[] =>
    nodes
      .filter((n) => n.level >= LOWEST_STORED_LEVEL)
      .map((n) => `${n.level}/${n.index}/${n.hash.toString('hex')}`)
      .sort();

  /** The root of a tree of `size` ≥ 1 leaves from stored nodes, read as the service reads it (`rootPlan`). */
  const storedRoot = async (size: number, read: NodeReader): Promise<Buffer> =>
    (await resolvePlan(rootPlan(size), read))[0]!;

  interface PlanNode {
    'Relation Name'?: string;
    'Plan Rows': number;
    Plans?: PlanNode[];
  }

  const SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33];

  describe('backfill of existing chains', () => {
    let acme: Map<string, string[]>;
    let globex: Map<string, string[]>;

    beforeAll(async () => {
      // Interleaved, so that no chain's events are contiguous in the events table.
      for (let round = 0; round < Math.max(...SIZES); round++) {
        for (const size of SIZES.filter((s) => s > round)) {
          await t
            .http()
            .post('/v1/events')
            .set(...bearer(KEYS.acme))
            .send({ actor: `user_${round}`, action: 'doc.update', chain: `merkle-${size}`, context: { round } })
            .expect(201);
        }
      }
      for (let i = 0; i < 6; i++)
        await t
          .http()
          .post('/v1/events')
          .set(...bearer(KEYS.globex))
          .send({ actor: 'g', action: 'a' })
          .expect(201);
      await rerunMigrations();
      acme = await exportedChains(KEYS.acme);
      globex = await exportedChains(KEYS.globex);
    });

    it('stores, for every chain, exactly the perfect subtrees above the leaves of the tree over its exported event hashes', async () => {
      expect([...acme.values()].map((h) => h.length).sort((a, b) => a - b)).toEqual(SIZES);
      for (const [chainId, hashes] of [...acme, ...globex])
        expect(await storedNodes(chainId)).toEqual(storedOf(extendTree(0, [], hashes.map(eventLeafHash)).nodes));
    });

    it('reads the levels below the stored ones from the events: leaves of the event hashes, and their pairs', async () => {
      for (const [chainId, hashes] of [...acme, ...globex]) {
        const leaves = hashes.map(eventLeafHash);
        const pairs = extendTree(0, [], leaves).nodes.filter((n) => n.level === 1);
        expect(pairs).toHaveLength(Math.floor(hashes.length / 2));
        const ids = [
          ...leaves.map((_, index) => ({ level: 0, index })),
          ...pairs.map(({ level, index }) => ({ level, index })),
        ];
        expect(await repository.nodes(chainId, ids)).toEqual([
          ...leaves.map((hash, index) => ({ level: 0, index, hash })),
          ...pairs,
        ]);
        // Past the head: no leaf, and no pair of which only one event exists.
        const past = [
          { level: 0, index: hashes.length },
          { level: 1, index: Math.floor(hashes.length / 2) },
        ];
        expect(await repository.nodes(chainId, past)).toEqual([]);
      }
    });

    it('gives, through the repository, the root, inclusion and consistency proofs of every size', async () => {
      for (const [chainId, hashes] of [...acme, ...globex]) {
        const leaves = hashes.map(eventLeafHash);
        const read = repository.reader(chainId);
        const roots = [merkleRoot([])];
        for (let n = 1; n <= leaves.length; n++) {
          roots.push(await storedRoot(n, read));
          expect(roots[n]).toEqual(merkleRoot(leaves.slice(0, n)));
        }
        const n = leaves.length;
        for (let m = 0; m < n; m++) {
          expect(verifyInclusion(m, n, leaves[m]!, await proveInclusion(m, n, read), roots[n]!)).toBe(true);
          expect(verifyConsistency(m, n, roots[m]!, roots[n]!, await proveConsistency(m, n, read))).toBe(true);
        }
      }
    });

    it("gives the frontiers of several chains in one read, of every size, and nothing of another chain's tree", async () => {
      const [chainId, hashes] = [...acme].find(([, h]) => h.length === 33)!;
      for (let size = 0; size <= 33; size++) {
        const frontier = (await repository.frontiers(new Map([[chainId, size]]))).get(chainId)!;
        expect(frontier.map(({ level, index }) => ({ level, index }))).toEqual(frontierIds(size));
        expect(frontier).toEqual(extendTree(0, [], hashes.slice(0, size).map(eventLeafHash)).frontier);
      }
      const all = await repository.frontiers(new Map([...acme, ...globex].map(([id, h]) => [id, h.length])));
      expect([...all.keys()]).toEqual([...acme.keys(), ...globex.keys()]);
      for (const [id, h] of [...acme, ...globex])
        expect(all.get(id)).toEqual(extendTree(0, [], h.map(eventLeafHash)).frontier);
      const [otherId] = [...globex.keys()];
      await expect(repository.frontiers(new Map([[otherId!, 33]]))).rejects.toThrow(
        `chain ${otherId} lacks Merkle node(s) of its frontier at size 33`,
      );
      expect(await repository.nodes(otherId!, [{ level: 5, index: 0 }])).toEqual([]);
    });
  });

  describe('the plan of a node read', () => {
    /** Every scan of `events` in a JSON plan, with the rows the planner expects of it. */
    const eventScans = (plan: PlanNode): PlanNode[] => [
      ...(plan['Relation Name'] === 'events' ? [plan] : []),
      ...(plan.Plans ?? []).flatMap(eventScans),
    ];

    it('expects at most two events for a node below the stored levels, however many the chain has', async () => {
      // 2,000 events and fresh statistics: a range estimate would be 0.5 % of the chain, 10 rows
      // (on a 1,000,000-event chain 5,000, which priced every inclusion proof above
      // jit_above_cost: 40 ms of JIT compilation per proof).
      for (let i = 0; i < 2; i++)
        await t
          .http()
          .post('/v1/events/batch')
          .set(...bearer(KEYS.acme))
          .send({ events: Array.from({ length: 1000 }, (_, k) => ({ actor: `u${k}`, action: 'a', chain: 'planned' })) })
          .expect(201);
      await t.dataSource.query('ANALYZE events');
      const [{ id }] = await t.dataSource.query<[{ id: string }]>(
        `SELECT audit_uuid_ulid('chn', id) AS id FROM chains WHERE name = 'planned'`,
      );
      for (const level of [0, 1]) {
        const [row] = await t.dataSource.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
          // Index from a function, as in the proof's statement: not a constant the planner can look up.
          `EXPLAIN (FORMAT JSON) SELECT node.hash FROM generate_series(7::bigint, 8) AS want(idx)
             CROSS JOIN ${merkleNodeAt('audit_ulid_uuid($1)', '$2::int', 'want.idx')}`,
          [id, level],
        );
        const scans = eventScans(row!['QUERY PLAN'][0].Plan);
        expect(scans.length).toBeGreaterThan(0);
        for (const scan of scans) expect(scan['Plan Rows']).toBeLessThanOrEqual(2);
      }
    });
  });

  describe('the repository writes what extendTree computes', () => {
    it('has nothing to write for leaves alone', () => {
      const node = (level: number): MerkleNode => ({ level, index: 0, hash: Buffer.alloc(32) });
      expect(repository.insertStatement([{ chainId: 'chn_x', nodes: [node(0), node(1)] }])).toBeNull();
      expect(repository.insertStatement([{ chainId: 'chn_x', nodes: [] }])).toBeNull();
      expect(repository.insertStatement([])).toBeNull();
    });

    let chainId: string;
    /** Event hashes of a synthetic chain (leaf data need not be a real event's hash). */
    const eventHashes = Array.from({ length: 40 }, (_, i) => createHash('sha256').update(`event ${i}`).digest('hex'));
    const leaves = eventHashes.map(eventLeafHash);

    beforeAll(async () => {
      chainId = `chn_${ulid()}`;
      const [{ account_id: accountId }] = await t.dataSource.query<[{ account_id: string }]>(
        `SELECT audit_uuid_ulid('acc', account_id) AS account_id FROM chains ORDER BY created_at LIMIT 1`,
      );
      await t.dataSource.query(
        `INSERT INTO chains (id, account_id, name) VALUES (audit_ulid_uuid($1), audit_ulid_uuid($2), 'merkle-synthetic')`,
        [chainId, accountId],
      );
      // The leaves are read from the events, so the chain has events with these hashes (its head is not moved: nothing reads it here).
      await t.dataSource.query(
        `INSERT INTO events (id, account_id, chain_id, position, actor, action, "timestamp", previous_hash, hash)
         SELECT audit_ulid_uuid('evt_' || left(substr($1, 5), 22) || lpad(p::text, 4, '0')), audit_ulid_uuid($2), audit_ulid_uuid($1), p, 'sql', 'merkle.synthetic', now(), decode(repeat('0', 64), 'hex'), decode(h, 'hex')
           FROM unnest($3::text[]) WITH ORDINALITY AS e(h, p)`,
        [chainId, accountId, eventHashes],
      );
    });

    it('grows a tree batch by batch from its stored frontier, in transactions', async () => {
      let size = 0;
      for (const batch of [1, 2, 5, 1, 7, 16, 8]) {
        await t.dataSource.transaction(async (tx) => {
          const frontier = (await repository.frontiers(new Map([[chainId, size]]), tx)).get(chainId)!;
          const { nodes } = extendTree(size, frontier, leaves.slice(size, size + batch));
          const insert = repository.insertStatement([{ chainId, nodes }]);
          if (insert) await tx.query(insert.text, insert.values);
        });
        size += batch;
        expect(await storedRoot(size, repository.reader(chainId))).toEqual(merkleRoot(leaves.slice(0, size)));
      }
      expect(await storedNodes(chainId)).toEqual(storedOf(extendTree(0, [], leaves).nodes));
    });

    it('refuses a second hash for a stored node, a hash that is not 32 bytes, and a node of a level that is not stored', async () => {
      const insert = (level: number, index: number, hash: Buffer) =>
        attempt((m) =>
          m.query(
            `INSERT INTO merkle_nodes (chain_id, level, "index", hash) VALUES (audit_ulid_uuid($1), $2, $3, $4)`,
            [chainId, level, index, hash],
          ),
        );
      expect(await insert(2, 0, Buffer.alloc(32))).toMatchObject({ code: '23505' });
      expect(await insert(2, 1000, Buffer.alloc(31))).toMatchObject({ code: '23514' });
      for (const level of [0, 1])
        expect(await insert(level, 1000, Buffer.alloc(32))).toMatchObject({
          code: '23514',
          message: expect.stringContaining('ck_merkle_nodes_level'),
        });
    });
  });

  describe('a node written ahead of the chain with the service’s own role', () => {
    it('is reported by /verify, and the append that would complete it is refused with a clear error, nothing written', async () => {
      const append = (i: number) =>
        t
          .http()
          .post('/v1/events')
          .set(...bearer(KEYS.acme))
          .send({ actor: `a${i}`, action: 'ahead', chain: 'node-ahead' });
      const first = (await append(1).expect(201)).body.data;
      const chainId: string = first.chain.id;
      // Node (2, 1) covers positions 5–8: the service stores it once position 8 is appended.
      await t.dataSource.query(
        `INSERT INTO merkle_nodes (chain_id, level, "index", hash) VALUES (audit_ulid_uuid($1), 2, 1, $2)`,
        [chainId, Buffer.alloc(32, 7)],
      );
      const verify = async () =>
        (
          await t
            .http()
            .get(`/v1/chain/${chainId}/verify`)
            .set(...bearer(KEYS.acme))
            .expect(200)
        ).body.data;
      const early = await verify();
      expect(early.valid).toBe(false);
      expect(early.errors).toEqual([
        expect.objectContaining({
          message: expect.stringContaining(
            '1 Merkle tree node(s) are stored for positions beyond the chain head at position 1',
          ),
        }),
      ]);
      for (let i = 2; i <= 7; i++) await append(i).expect(201);
      const refused = await append(8).expect(500);
      expect(refused.body.error).toMatchObject({
        code: 'INTERNAL_ERROR',
        message: expect.stringContaining(
          `Chain ${chainId} cannot grow: its stored Merkle tree already holds node (2, 1) beyond the chain head`,
        ),
        details: { chainId, level: 2, index: 1 },
      });
      const head = await t.dataSource.query<[{ n: number }]>(
        `SELECT last_position::int AS n FROM chains WHERE id = audit_ulid_uuid($1)`,
        [chainId],
      );
      expect(head[0].n).toBe(7);
      // Other chains are not held back.
      await t
        .http()
        .post('/v1/events/batch')
        .set(...bearer(KEYS.acme))
        .send({ events: [{ actor: 'a', action: 'b', chain: 'node-ahead-neighbour' }] })
        .expect(201);
      expect((await verify()).errors).toEqual([
        expect.objectContaining({ message: expect.stringContaining('beyond the chain head at position 7') }),
      ]);
    });
  });

  describe('the append path', () => {
    it('stores the new nodes in the statement that moves the head: no statement of its own on a remembered chain', async () => {
      const append = (count: number) =>
        t
          .http()
          .post('/v1/events/batch')
          .set(...bearer(KEYS.acme))
          .send({
            events: Array.from({ length: count }, () => ({
              actor: 'a',
              action: 'merkle.append',
              chain: 'merkle-append',
            })),
          })
          .expect(201);
      await append(2); // the chain's first append reads its (empty) frontier; the next finds it remembered
      const queries = jest.spyOn(PostgresQueryRunner.prototype, 'query');
      try {
        await append(2);
        const touching = queries.mock.calls.map(([sql]) => String(sql)).filter((sql) => /\bmerkle_nodes\b/.test(sql));
        expect(touching).toHaveLength(1);
        expect(touching[0]).toMatch(
          /^WITH written AS \(INSERT INTO merkle_nodes[\s\S]*\)\s*UPDATE chains SET last_position/,
        );
      } finally {
        queries.mockRestore();
      }
      const chainId = ((await append(1)).body as { data: { chain: { id: string } }[] }).data[0]!.chain.id;
      const hashes = (await exportedChains(KEYS.acme)).get(chainId)!;
      expect(hashes).toHaveLength(5);
      expect(await storedNodes(chainId)).toEqual(storedOf(extendTree(0, [], hashes.map(eventLeafHash)).nodes));
    });
  });

  const attempt = (work: (m: Sql) => Promise<unknown>) => attemptSql(t.dataSource, work);

  describe('append-only', () => {
    it.each([
      ['UPDATE', `UPDATE merkle_nodes SET hash = sha256(hash)`],
      ['UPDATE of no row at all', `UPDATE merkle_nodes SET hash = hash WHERE level < 0`],
      ['DELETE', `DELETE FROM merkle_nodes`],
      ['TRUNCATE', `TRUNCATE merkle_nodes`],
      ['TRUNCATE through a cascade from chains', `TRUNCATE chains CASCADE`],
    ])('refuses %s', async (_label, sql) => {
      const before = await t.dataSource.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM merkle_nodes`);
      expect(before[0].n).toBeGreaterThan(0);
      expect(await attempt((m) => m.query(sql))).toMatchObject({
        code: '42501',
        message: expect.stringMatching(/not allowed: the audit trail is append-only/),
      });
      expect(await t.dataSource.query(`SELECT count(*)::int AS n FROM merkle_nodes`)).toEqual(before);
    });
  });
});
