import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { frontierIds, LOWEST_STORED_LEVEL, MERKLE_HASH_BYTES, MerkleNode, NodeId, NodeReader } from '@app/hashing';
import { Db, queryPrepared } from '../transaction-runner';
import { SqlQuery } from './sql-query';
import { vacuumTable, VacuumOptions } from './vacuum';

/** What an inclusion proof needs (`MerkleNodesRepository.inclusion`). */
export interface InclusionFacts {
  chainId: string;
  position: number;
  hash: string;
  /** The chain's size now. */
  chainSize: number;
  /** The size asked for, or the chain's. */
  size: number;
  /** The nodes among those the proof and root need (none when the size is out of range). */
  nodes: MerkleNode[];
}

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
  const leaf = `sha256(decode('00', 'hex') || decode(e.hash, 'hex'))`;
  return `LATERAL (
      SELECT n.hash FROM merkle_nodes n
       WHERE n.chain_id = ${chain} AND n.level = ${level} AND n."index" = ${idx}
      UNION ALL
      SELECT ${leaf} FROM events e WHERE ${level} = 0 AND e.chain_id = ${chain} AND e.position = ${idx} + 1
      UNION ALL
      SELECT sha256(decode('01', 'hex') || string_agg(p.hash, ''::bytea ORDER BY p.at)) FROM (
          SELECT e.position - 1 AS at, ${leaf} AS hash FROM events e
           WHERE ${level} = 1 AND e.chain_id = ${chain} AND e.position IN (2 * ${idx} + 1, 2 * ${idx} + 2)
          UNION ALL
          SELECT s."index", s.hash FROM merkle_nodes s
           WHERE ${level} = 1 AND s.chain_id = ${chain} AND s.level = 0 AND s."index" IN (2 * ${idx}, 2 * ${idx} + 1)) p
      HAVING count(*) = 2) node(hash)`;
}

/** MerkleNodesRepository.inclusion's statement; `size` ($3) null means the chain's size. */
export const INCLUSION_SQL = `WITH f AS (
    SELECT e.chain_id, e.position, e.hash, c.last_position AS chain_size, COALESCE($3::bigint, c.last_position) AS size
      FROM events e JOIN chains c ON c.id = e.chain_id WHERE e.id = $1 AND e.account_id = $2)
  SELECT f.chain_id, f.position::float8 AS position, f.hash, f.chain_size::float8 AS chain_size, f.size::float8 AS size,
         n.levels, n.indexes, n.hashes
    FROM f CROSS JOIN LATERAL (
      SELECT array_agg(l.level) AS levels, array_agg(w.idx::float8) AS indexes, string_agg(node.hash, ''::bytea) AS hashes
        FROM generate_series(0, 62) AS l(level)
        CROSS JOIN LATERAL (VALUES (((f.position - 1) >> l.level) # 1),
                                   (CASE WHEN (f.size >> l.level) & 1 = 1 THEN (f.size >> l.level) - 1 END)) AS w(idx)
        CROSS JOIN ${merkleNodeAt('f.chain_id', 'l.level', 'w.idx')}
       WHERE f.size BETWEEN f.position AND f.chain_size AND (f.size >> l.level) > 0) n`;

/** MerkleNodesRepository.chainNodes's statement. */
const CHAIN_NODES_SQL = `SELECT c.id, c.last_position::float8 AS size, c.first_position::float8 AS first_position, n.hashes
    FROM chains c CROSS JOIN LATERAL (
      SELECT string_agg(node.hash, ''::bytea ORDER BY want.ord) AS hashes
        FROM unnest($3::smallint[], $4::bigint[]) WITH ORDINALITY AS want(level, idx, ord)
        CROSS JOIN ${merkleNodeAt('c.id', 'want.level', 'want.idx')}
       WHERE $5::bigint <= c.last_position) n
   WHERE c.id = $1 AND c.account_id = $2`;

interface InclusionRow {
  chain_id: string;
  position: number;
  hash: string;
  chain_size: number;
  size: number;
  /** Null when no node qualifies (size out of range); else the nodes' levels, indexes and hashes, in one order. */
  levels: number[] | null;
  indexes: number[] | null;
  hashes: Buffer | null;
}

/** Hashes read concatenated into one bytea (string_agg), cut back into 32-byte views of it. */
function splitHashes(bytes: Buffer | null): Buffer[] {
  const hashes: Buffer[] = [];
  for (let at = 0; bytes && at < bytes.length; at += MERKLE_HASH_BYTES)
    hashes.push(bytes.subarray(at, at + MERKLE_HASH_BYTES));
  return hashes;
}

interface NodeRow {
  level: number;
  index: string;
  hash: Buffer;
}

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

  /** After a retention prune: VACUUM (ANALYZE), or VACUUM FULL, as EventsRepository.vacuum. */
  async vacuum(options: VacuumOptions): Promise<void> {
    await vacuumTable(this.dataSource, 'merkle_nodes', options);
  }

  /** The table's size with its index, in bytes (pg_total_relation_size). */
  async storageBytes(): Promise<number> {
    const [row] = (await this.pool.query(`SELECT pg_total_relation_size('merkle_nodes')::float8 AS bytes`)) as {
      bytes: number;
    }[];
    return row?.bytes ?? 0;
  }

  /** The tree's nodes among `ids`, in the order asked, in one query; a node it lacks is left out. */
  async nodes(chainId: string, ids: readonly NodeId[], db: Db = this.pool): Promise<MerkleNode[]> {
    if (ids.length === 0) return [];
    const rows = (await db.query(
      `SELECT want.level, want.idx::text AS index, node.hash
         FROM unnest($2::smallint[], $3::bigint[]) WITH ORDINALITY AS want(level, idx, ord)
         CROSS JOIN ${merkleNodeAt('$1::varchar', 'want.level', 'want.idx')}
        ORDER BY want.ord`,
      [chainId, ids.map((id) => id.level), ids.map((id) => id.index)],
    )) as NodeRow[];
    return rows.map((row) => ({ level: row.level, index: Number(row.index), hash: row.hash }));
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
    const [row] = await queryPrepared<InclusionRow>(db, INCLUSION_SQL, [eventId, accountId, size]);
    if (!row) return null;
    const { levels, indexes, hashes } = row;
    return {
      chainId: row.chain_id,
      position: row.position,
      hash: row.hash,
      chainSize: row.chain_size,
      size: row.size,
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
  ): Promise<{ chainId: string; size: number; firstPosition: number; hashes: Buffer[] } | null> {
    const [row] = await queryPrepared<{ id: string; size: number; first_position: number; hashes: Buffer | null }>(
      db,
      CHAIN_NODES_SQL,
      [chainId, accountId, ids.map((id) => id.level), ids.map((id) => id.index), upTo],
    );
    if (!row) return null;
    return { chainId: row.id, size: row.size, firstPosition: row.first_position, hashes: splitHashes(row.hashes) };
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
    const wanted = frontiers.flatMap(({ chainId, ids }) => ids.map((id) => ({ chainId, ...id })));
    const result = new Map<string, MerkleNode[]>([...sizes.keys()].map((chainId) => [chainId, []]));
    if (wanted.length === 0) return result;
    const rows = (await db.query(
      `SELECT want.chain_id, want.level, want.idx::text AS index, node.hash
         FROM unnest($1::varchar[], $2::smallint[], $3::bigint[]) WITH ORDINALITY AS want(chain_id, level, idx, ord)
         CROSS JOIN ${merkleNodeAt('want.chain_id', 'want.level', 'want.idx')}
        ORDER BY want.ord`,
      [wanted.map((w) => w.chainId), wanted.map((w) => w.level), wanted.map((w) => w.index)],
    )) as (NodeRow & { chain_id: string })[];
    for (const row of rows)
      result.get(row.chain_id)!.push({ level: row.level, index: Number(row.index), hash: row.hash });
    for (const { chainId, size, ids } of frontiers)
      if (result.get(chainId)!.length !== ids.length)
        throw new Error(`chain ${chainId} lacks Merkle node(s) of its frontier at size ${size}`);
    return result;
  }

  /**
   * The statement that stores the new nodes of several chains' trees, as extendTree gives them per
   * chain (a node already stored is a conflict), or null when there are none to store. Nodes below
   * LOWEST_STORED_LEVEL are skipped: they are read from the events (`merkleNodeAt`). The append
   * transaction runs it with its heads' move, in one round trip (ChainsRepository `moveHeads`).
   */
  insertStatement(trees: readonly { chainId: string; nodes: readonly MerkleNode[] }[]): SqlQuery | null {
    const chainIds: string[] = [];
    const levels: number[] = [];
    const indexes: number[] = [];
    const hashes: string[] = [];
    for (const { chainId, nodes } of trees)
      for (const node of nodes) {
        if (node.level < LOWEST_STORED_LEVEL) continue;
        chainIds.push(chainId);
        levels.push(node.level);
        indexes.push(node.index);
        hashes.push(node.hash.toString('hex'));
      }
    if (chainIds.length === 0) return null;
    return {
      text: `INSERT INTO merkle_nodes (chain_id, level, "index", hash)
       SELECT chain_id, level, idx, decode(hash, 'hex')
         FROM unnest($1::varchar[], $2::smallint[], $3::bigint[], $4::text[]) AS node(chain_id, level, idx, hash)`,
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
