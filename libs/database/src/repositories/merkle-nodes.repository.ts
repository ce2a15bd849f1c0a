import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { frontierIds, LOWEST_STORED_LEVEL, MERKLE_HASH_BYTES, MerkleNode, NodeId, NodeReader } from '@app/hashing';
import { ChainEntity } from '../entities/chain.entity';
import { EventEntity } from '../entities/event.entity';
import { MerkleNodeEntity } from '../entities/merkle-node.entity';
import {
  arrayOf,
  asId,
  asBuffer,
  asNumber,
  computed,
  joined,
  orNull,
  selectPrepared,
  selectRows,
  Table,
} from '../schema/table';
import { Db } from '../transaction-runner';
import { SqlQuery } from './sql-query';

const merkleNodes = new Table(MerkleNodeEntity, 'n');
/** merkle_nodes again, as the stored leaves of a pair in merkleNodeAt. */
const storedLeaves = new Table(MerkleNodeEntity, 's');
const events = new Table(EventEntity, 'e');
const chains = new Table(ChainEntity, 'c');

/**
 * The node (level, idx) of chain `chain`'s tree, as a lateral subquery `node(hash)` with no row when
 * the tree has no such node. Levels from LOWEST_STORED_LEVEL (2) up are stored in `merkle_nodes`;
 * the two below are not (they would be three rows in four, on every append's critical path) and
 * are derived here from `events` through uq_events_chain_position: the leaf (0, i) is
 * SHA-256(0x00 || hash of the event at position i + 1), the node (1, i) SHA-256(0x01 || the
 * leaves of positions 2i + 1 and 2i + 2), only when both exist. Over a pruned prefix (docs/contract.md
 * §14) the events are gone, and the prune stored instead the nodes of levels 0 and 1 that proofs of
 * the remaining events need (migration 1764800000000): those are read from `merkle_nodes` like the
 * others, and a pair's leaf may be such a stored leaf (the pair that straddles the first retained
 * position). The one place that says how a node is read: every statement below reads through it.
 * The pair's events are named as two positions (IN), not as a range: the planner then expects two
 * rows of the unique index, where for a range between computed bounds it guesses 0.5 % of the chain
 * (5,000 rows on a 1,000,000-event chain), which priced the inclusion proof above `jit_above_cost`:
 * 40 ms of JIT compilation per proof.
 */
export function merkleNodeAt(chain: string, level: string, idx: string): string {
  const [n, s, e] = [merkleNodes, storedLeaves, events];
  const leaf = `sha256(decode('00', 'hex') || ${e.column('hash')})`;
  const position = e.column('position');
  return `LATERAL (
      SELECT ${n.column('hash')} FROM merkle_nodes n
       WHERE ${n.column('chainId')} = ${chain} AND ${n.column('level')} = ${level} AND ${n.column('index')} = ${idx}
      UNION ALL
      SELECT ${leaf} FROM events e WHERE ${level} = 0 AND ${e.column('chainId')} = ${chain} AND ${position} = ${idx} + 1
      UNION ALL
      SELECT sha256(decode('01', 'hex') || string_agg(p.hash, ''::bytea ORDER BY p.at)) FROM (
          SELECT ${position} - 1 AS at, ${leaf} AS hash FROM events e
           WHERE ${level} = 1 AND ${e.column('chainId')} = ${chain} AND ${position} IN (2 * ${idx} + 1, 2 * ${idx} + 2)
          UNION ALL
          SELECT ${s.column('index')}, ${s.column('hash')} FROM merkle_nodes s
           WHERE ${level} = 1 AND ${s.column('chainId')} = ${chain} AND ${s.column('level')} = 0
             AND ${s.column('index')} IN (2 * ${idx}, 2 * ${idx} + 1)) p
      HAVING count(*) = 2) node(hash)`;
}

/** One node of a tree as merkleNodeAt gives it (`node.hash`) at the position asked (`want.level`, `want.idx`). */
const NODE = computed<Pick<MerkleNodeEntity, 'level' | 'index' | 'hash'>>({
  level: ['want.level', asNumber],
  index: ['want.idx::text', asNumber],
  hash: ['node.hash', asBuffer],
});

/** Nodes' hashes read concatenated into one bytea (string_agg), null when there are none. */
const HASHES = computed({ hashes: ['n.hashes', orNull(asBuffer)] });

/**
 * The CTE `f` of INCLUSION_SQL: the event's own columns (so the Table `inclusionEvent` names them),
 * the chain's size, and the size asked for.
 */
const inclusionEvent = new Table(EventEntity, 'f');

/**
 * What an inclusion proof needs (`MerkleNodesRepository.inclusion`): the event, the chain's size now
 * (`chainSize`) and the size asked for or the chain's (`size`); then, when no node qualifies (size
 * out of range) nulls, else the nodes' levels, indexes and hashes, in one order.
 */
const INCLUSION = joined(
  inclusionEvent.select('chainId', 'hash'),
  computed<
    Pick<EventEntity, 'position'> & { chainSize: ChainEntity['lastPosition']; size: ChainEntity['lastPosition'] }
  >({
    position: [`${inclusionEvent.column('position')}::float8`, asNumber],
    chainSize: ['f.chain_size::float8', asNumber],
    size: ['f.size::float8', asNumber],
  }),
  joined(
    computed({ levels: ['n.levels', orNull(arrayOf(asNumber))], indexes: ['n.indexes', orNull(arrayOf(asNumber))] }),
    HASHES,
  ),
);

/** What an inclusion proof needs (`MerkleNodesRepository.inclusion`): INCLUSION's row, its nodes cut apart. */
export type InclusionFacts = Omit<ReturnType<typeof INCLUSION.decode>, 'levels' | 'indexes' | 'hashes'> & {
  /** The nodes among those the proof and root need (none when the size is out of range). */
  nodes: MerkleNode[];
};

/** MerkleNodesRepository.inclusion's statement; `size` ($3) null means the chain's size. */
export const INCLUSION_SQL = (() => {
  const [chainId, position] = [inclusionEvent.column('chainId'), inclusionEvent.column('position')];
  return `WITH f AS (
    SELECT ${events.column('chainId')}, ${events.column('position')}, ${events.column('hash')},
           ${chains.column('lastPosition')} AS chain_size, COALESCE($3::bigint, ${chains.column('lastPosition')}) AS size
      FROM events e JOIN chains c ON c.id = ${events.column('chainId')} WHERE e.id = $1 AND ${events.column('accountId')} = $2)
  SELECT ${INCLUSION.sql}
    FROM f CROSS JOIN LATERAL (
      SELECT array_agg(l.level) AS levels, array_agg(w.idx::float8) AS indexes, string_agg(node.hash, ''::bytea) AS hashes
        FROM generate_series(0, 62) AS l(level)
        CROSS JOIN LATERAL (VALUES (((${position} - 1) >> l.level) # 1),
                                   (CASE WHEN (f.size >> l.level) & 1 = 1 THEN (f.size >> l.level) - 1 END)) AS w(idx)
        CROSS JOIN ${merkleNodeAt(chainId, 'l.level', 'w.idx')}
       WHERE f.size BETWEEN ${position} AND f.chain_size AND (f.size >> l.level) > 0) n`;
})();

/** MerkleNodesRepository.chainNodes's row: the chain, its size and first retained position, the nodes' hashes. */
const CHAIN_NODES = joined(
  computed<{ chainId: ChainEntity['id'] } & Pick<ChainEntity, 'firstPosition'> & { size: ChainEntity['lastPosition'] }>(
    {
      chainId: ['c.id', asId('chn')],
      size: [`${chains.column('lastPosition')}::float8`, asNumber],
      firstPosition: [`${chains.column('firstPosition')}::float8`, asNumber],
    },
  ),
  HASHES,
);

/** MerkleNodesRepository.chainNodes's statement. */
const CHAIN_NODES_SQL = `SELECT ${CHAIN_NODES.sql}
    FROM chains c CROSS JOIN LATERAL (
      SELECT string_agg(node.hash, ''::bytea ORDER BY want.ord) AS hashes
        FROM unnest($3::smallint[], $4::bigint[]) WITH ORDINALITY AS want(level, idx, ord)
        CROSS JOIN ${merkleNodeAt('c.id', 'want.level', 'want.idx')}
       WHERE $5::bigint <= ${chains.column('lastPosition')}) n
   WHERE c.id = $1 AND ${chains.column('accountId')} = $2`;

/** Hashes read concatenated into one bytea (string_agg), cut back into 32-byte views of it. */
function splitHashes(bytes: Buffer | null): Buffer[] {
  const hashes: Buffer[] = [];
  for (let at = 0; bytes && at < bytes.length; at += MERKLE_HASH_BYTES)
    hashes.push(bytes.subarray(at, at + MERKLE_HASH_BYTES));
  return hashes;
}

/** The nodes of several chains' trees (`frontiers`): NODE and the chain asked for. */
const CHAIN_NODE = joined(
  computed<Pick<MerkleNodeEntity, 'chainId'>>({ chainId: ['want.chain_id', asId('chn')] }),
  NODE,
);

/**
 * Every query of the chains' Merkle trees: each chain's perfect subtrees (level, index), those from
 * LOWEST_STORED_LEVEL up stored in `merkle_nodes`, those below read from the events
 * (`merkleNodeAt`); callers see one tree and need not know which.
 * Methods take the transaction's `db` last, defaulting to the pool.
 */
@Injectable()
export class MerkleNodesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The tree's nodes among `ids`, in the order asked, in one query; a node it lacks is left out. */
  async nodes(chainId: string, ids: readonly NodeId[], db: Db = this.pool): Promise<MerkleNode[]> {
    if (ids.length === 0) return [];
    return selectRows(
      db,
      NODE,
      `SELECT ${NODE.sql}
         FROM unnest($2::smallint[], $3::bigint[]) WITH ORDINALITY AS want(level, idx, ord)
         CROSS JOIN ${merkleNodeAt('$1::uuid', 'want.level', 'want.idx')}
        ORDER BY want.ord`,
      [ulidToUuid(chainId), ids.map((id) => id.level), ids.map((id) => id.index)],
    );
  }

  /**
   * An inclusion proof's reads in one statement (docs/contract.md §10; the proof endpoint's latency is
   * one round trip), prepared once per connection: the account's event, its chain's size, and,
   * when position ≤ size ≤ the chain's size, every node the proof and the root of `size`
   * (default the chain's) can need: at each level the sibling of the leaf's ancestor, and the
   * perfect subtree on the right edge of the tree of `size` (merkle.ts `inclusionPlan` and
   * `rootPlan` take only those). The nodes come back as one row (their hashes concatenated), not a
   * row each. Null for an unknown event or another account's.
   */
  async inclusion(
    accountId: string,
    eventId: string,
    size: number | null,
    db: Db = this.pool,
  ): Promise<InclusionFacts | null> {
    const [row] = await selectPrepared(db, INCLUSION, INCLUSION_SQL, [
      ulidToUuid(eventId),
      ulidToUuid(accountId),
      size,
    ]);
    if (!row) return null;
    const { levels, indexes, hashes, ...facts } = row;
    return {
      ...facts,
      nodes: splitHashes(hashes).map((hash, i) => ({ level: levels![i]!, index: indexes![i]!, hash })),
    };
  }

  /**
   * A consistency proof's reads in one statement (docs/contract.md §10), prepared once per connection: the
   * account's chain, its size and first retained position (docs/contract.md §14), and, when `upTo` ≤ that size, the stored nodes `ids` (repeats
   * allowed), in that order. Null for an unknown chain or another account's; `hashes` is empty when
   * `upTo` exceeds the size, and one short of `ids` per node not stored.
   */
  async chainNodes(
    accountId: string,
    chainId: string,
    ids: readonly NodeId[],
    upTo: number,
    db: Db = this.pool,
  ): Promise<(Omit<ReturnType<typeof CHAIN_NODES.decode>, 'hashes'> & { hashes: Buffer[] }) | null> {
    const [row] = await selectPrepared(db, CHAIN_NODES, CHAIN_NODES_SQL, [
      ulidToUuid(chainId),
      ulidToUuid(accountId),
      ids.map((id) => id.level),
      ids.map((id) => id.index),
      upTo,
    ]);
    if (!row) return null;
    return { ...row, hashes: splitHashes(row.hashes) };
  }

  /** What proofs read through (merkle.ts `NodeReader`): every node asked for, or an error naming the missing. */
  reader(chainId: string, db: Db = this.pool): NodeReader {
    return async (ids) => (await this.all(chainId, ids, db)).map((node) => node.hash);
  }

  /**
   * The frontiers of several chains' trees (chain id → size) in one query: what one append
   * transaction extends. Each chain's nodes come back in `frontierIds(size)` order; a missing
   * node is an error naming it.
   */
  async frontiers(sizes: ReadonlyMap<string, number>, db: Db = this.pool): Promise<Map<string, MerkleNode[]>> {
    const frontiers = [...sizes].map(([chainId, size]) => ({ chainId, size, ids: frontierIds(size) }));
    const wanted = frontiers.flatMap(({ chainId, ids }) => {
      const stored = ulidToUuid(chainId);
      return ids.map((id) => ({ stored, ...id }));
    });
    const result = new Map<string, MerkleNode[]>([...sizes.keys()].map((chainId) => [chainId, []]));
    if (wanted.length === 0) return result;
    const rows = await selectRows(
      db,
      CHAIN_NODE,
      `SELECT ${CHAIN_NODE.sql}
         FROM unnest($1::uuid[], $2::smallint[], $3::bigint[]) WITH ORDINALITY AS want(chain_id, level, idx, ord)
         CROSS JOIN ${merkleNodeAt('want.chain_id', 'want.level', 'want.idx')}
        ORDER BY want.ord`,
      [wanted.map((w) => w.stored), wanted.map((w) => w.level), wanted.map((w) => w.index)],
    );
    for (const { chainId, ...node } of rows) result.get(chainId)!.push(node);
    for (const { chainId, size, ids } of frontiers)
      if (result.get(chainId)!.length !== ids.length)
        throw new Error(`chain ${chainId} lacks Merkle node(s) of its frontier at size ${size}`);
    return result;
  }

  /**
   * The statement that stores the new nodes of several chains' trees, as extendTree gives them per
   * chain (a node already stored is a conflict), or null when there are none to store. Nodes below
   * LOWEST_STORED_LEVEL are skipped: they are read from the events (`merkleNodeAt`). The append
   * transaction runs it with its heads' move, in one round trip (ChainHeadsRepository `moveHeads`).
   */
  insertStatement(trees: readonly { chainId: string; nodes: readonly MerkleNode[] }[]): SqlQuery | null {
    const chainIds: string[] = [];
    const levels: number[] = [];
    const indexes: number[] = [];
    const hashes: string[] = [];
    for (const { chainId, nodes } of trees) {
      let stored: string | undefined;
      for (const node of nodes) {
        if (node.level < LOWEST_STORED_LEVEL) continue;
        chainIds.push((stored ??= ulidToUuid(chainId)));
        levels.push(node.level);
        indexes.push(node.index);
        hashes.push(node.hash.toString('hex'));
      }
    }
    if (chainIds.length === 0) return null;
    const columns = (['chainId', 'level', 'index', 'hash'] as const).map((p) => merkleNodes.bare(p)).join(', ');
    return {
      text: `INSERT INTO merkle_nodes (${columns})
       SELECT chain_id, level, idx, decode(hash, 'hex')
         FROM unnest($1::uuid[], $2::smallint[], $3::bigint[], $4::text[]) AS node(chain_id, level, idx, hash)`,
      values: [chainIds, levels, indexes, hashes],
    };
  }

  private async all(chainId: string, ids: readonly NodeId[], db: Db): Promise<MerkleNode[]> {
    const found = await this.nodes(chainId, ids, db);
    if (found.length !== ids.length) {
      const have = new Set(found.map((n) => `${n.level}/${n.index}`));
      const missing = ids.filter((id) => !have.has(`${id.level}/${id.index}`));
      throw new Error(
        `chain ${chainId} lacks Merkle node(s) ${missing.map((id) => `(${id.level}, ${id.index})`).join(', ')}`,
      );
    }
    return found;
  }
}
